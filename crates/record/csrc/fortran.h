/* What the Fortran entry points share (fortran.c, uncovered.c): the four names a Fortran
 * compiler may give a routine, and the real Fortran routine looked up by name.
 *
 * Open MPI's Fortran bindings (`mpif.h`, `use mpi`) call PMPI_* directly, so an
 * interposed C MPI_Send never sees a Fortran program's sends; these wrappers take the
 * Fortran names themselves and call the MPI library's own Fortran routine
 * (`pmpi_send_`), which handles MPI_IN_PLACE, MPI_BOTTOM and the status sentinels of
 * Fortran as it always does. Every Fortran argument is passed by reference, so a routine
 * with N arguments is N pointers (none of the covered routines has a CHARACTER argument,
 * whose hidden length would follow). */
#ifndef PERFCOMPOSE_RECORD_FORTRAN_H
#define PERFCOMPOSE_RECORD_FORTRAN_H

#include "record.h"

/* The names gfortran (`mpi_send_`), g77-style compilers (`mpi_send__`), and compilers
 * without underscores (`mpi_send`, `MPI_SEND`) use, all for the wrapper `fn`. */
#define PC_F_NAMES(fn, lower, upper)                                                          \
    PC_EXPORT extern __typeof__(fn) lower##_ __attribute__((alias(#fn)));                     \
    PC_EXPORT extern __typeof__(fn) lower##__ __attribute__((alias(#fn)));                    \
    PC_EXPORT extern __typeof__(fn) lower __attribute__((alias(#fn)));                        \
    PC_EXPORT extern __typeof__(fn) upper __attribute__((alias(#fn)));

/* The MPI library's Fortran routine `lower` (its profiling name `pmpi_lower_`, or the
 * other manglings), looked up once. */
PC_HIDDEN void *pc_f_resolve(const char *lower_and_upper);

/* `lower` and `upper` are string literals, passed on as "lower\0upper". */
#define PC_F_REAL(type, slot, lower, upper) \
    ((type)pc_lookup(&slot, pc_f_resolve, lower "\0" upper))

#endif
