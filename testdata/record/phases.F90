! The Fortran twin of phases.c for `perfcompose record`'s tests: a ring, a halo exchange,
! an allreduce (also MPI_IN_PLACE), a communicator split, receives from MPI_ANY_SOURCE
! (in a routine that includes mpif.h; the rest uses the mpi module), every covered
! collective, a cancelled receive, and two calls the recorder does not cover (MPI_Iprobe,
! MPI_Scan). Wrong
! results stop the program with status 1.
!
!     mpif90 -O1 -o phases_f phases.F90 && mpirun -np 4 ./phases_f
module checks
  implicit none
contains
  subroutine check(ok, line)
    use mpi
    logical, intent(in) :: ok
    integer, intent(in) :: line
    integer :: ierr
    if (.not. ok) then
      write (0, '(a,i0)') 'check failed at line ', line
      call MPI_Abort(MPI_COMM_WORLD, 1, ierr)
    end if
  end subroutine check

  ! About n multiply-adds of computation.
  subroutine work(n)
    integer, intent(in) :: n
    double precision, volatile :: x
    integer :: i
    x = 1.0d0
    do i = 1, n
      x = x * 1.0000001d0 + 1d-9
    end do
  end subroutine work
end module checks

subroutine ring(rank, size)
  use mpi
  use checks
  implicit none
  integer, intent(in) :: rank, size
  integer :: next, prev, token, got, it, ierr, reqs(2)
  double precision :: big(4096), inb(4096)
  integer :: status(MPI_STATUS_SIZE)
  next = mod(rank + 1, size)
  prev = mod(rank + size - 1, size)
  token = rank
  do it = 0, 2
    call MPI_Irecv(got, 1, MPI_INTEGER, prev, 10 + it, MPI_COMM_WORLD, reqs(1), ierr)
    call MPI_Isend(token, 1, MPI_INTEGER, next, 10 + it, MPI_COMM_WORLD, reqs(2), ierr)
    call work(200000)
    call MPI_Waitall(2, reqs, MPI_STATUSES_IGNORE, ierr)
    call check(got == modulo(rank - it - 1, size), __LINE__)
    token = got
  end do
  big = 0
  big(1) = rank
  if (mod(rank, 2) == 0) then
    call MPI_Send(big, 4096, MPI_DOUBLE_PRECISION, next, 20, MPI_COMM_WORLD, ierr)
    call MPI_Recv(inb, 4096, MPI_DOUBLE_PRECISION, prev, 20, MPI_COMM_WORLD, status, ierr)
  else
    call MPI_Recv(inb, 4096, MPI_DOUBLE_PRECISION, prev, 20, MPI_COMM_WORLD, MPI_STATUS_IGNORE, ierr)
    call MPI_Send(big, 4096, MPI_DOUBLE_PRECISION, next, 20, MPI_COMM_WORLD, ierr)
  end if
  call check(inb(1) == prev, __LINE__)
end subroutine ring

subroutine halo(rank, size)
  use mpi
  use checks
  implicit none
  integer, intent(in) :: rank, size
  integer, parameter :: n = 1000
  double precision :: u(0:n + 1), l, r
  integer :: left, right, step, ierr, status(MPI_STATUS_SIZE), reqs(4), k, idx, flag
  logical :: done
  u = rank
  left = MPI_PROC_NULL
  right = MPI_PROC_NULL
  if (rank > 0) left = rank - 1
  if (rank < size - 1) right = rank + 1
  do step = 1, 4
    call MPI_Sendrecv(u(n), 1, MPI_DOUBLE_PRECISION, right, 30, u(0), 1, MPI_DOUBLE_PRECISION, &
                      left, 30, MPI_COMM_WORLD, status, ierr)
    call MPI_Sendrecv(u(1), 1, MPI_DOUBLE_PRECISION, left, 31, u(n + 1), 1, MPI_DOUBLE_PRECISION, &
                      right, 31, MPI_COMM_WORLD, MPI_STATUS_IGNORE, ierr)
    if (left /= MPI_PROC_NULL) call check(u(0) == left, __LINE__)
    call work(100000)
  end do
  k = 0
  l = -1
  r = -1
  if (left /= MPI_PROC_NULL) then
    k = k + 1
    call MPI_Irecv(l, 1, MPI_DOUBLE_PRECISION, left, 32, MPI_COMM_WORLD, reqs(k), ierr)
    k = k + 1
    call MPI_Issend(u(1), 1, MPI_DOUBLE_PRECISION, left, 33, MPI_COMM_WORLD, reqs(k), ierr)
  end if
  if (right /= MPI_PROC_NULL) then
    k = k + 1
    call MPI_Irecv(r, 1, MPI_DOUBLE_PRECISION, right, 33, MPI_COMM_WORLD, reqs(k), ierr)
    k = k + 1
    call MPI_Isend(u(n), 1, MPI_DOUBLE_PRECISION, right, 32, MPI_COMM_WORLD, reqs(k), ierr)
  end if
  if (k > 0) then
    call MPI_Waitany(k, reqs, idx, MPI_STATUS_IGNORE, ierr)
    done = .false.
    do while (.not. done)
      call MPI_Testall(k, reqs, done, MPI_STATUSES_IGNORE, ierr)
    end do
  end if
  if (left /= MPI_PROC_NULL) call check(l == left, __LINE__)
  if (right /= MPI_PROC_NULL) call check(r == right, __LINE__)
  flag = 0
end subroutine halo

subroutine collectives(comm)
  use mpi
  use checks
  implicit none
  integer, intent(in) :: comm
  integer :: me, n, ierr, b, i, one, red
  double precision :: x, total, rmax
  integer, allocatable :: all(:), back(:), counts(:), displs(:)
  call MPI_Comm_rank(comm, me, ierr)
  call MPI_Comm_size(comm, n, ierr)
  x = me + 1
  call MPI_Allreduce(x, total, 1, MPI_DOUBLE_PRECISION, MPI_SUM, comm, ierr)
  call check(total == n * (n + 1) / 2.0d0, __LINE__)
  call MPI_Allreduce(MPI_IN_PLACE, x, 1, MPI_DOUBLE_PRECISION, MPI_SUM, comm, ierr)
  call check(x == total, __LINE__)
  b = 0
  if (me == 0) b = 42
  call MPI_Bcast(b, 1, MPI_INTEGER, 0, comm, ierr)
  call check(b == 42, __LINE__)
  call MPI_Reduce(total, rmax, 1, MPI_DOUBLE_PRECISION, MPI_MAX, n - 1, comm, ierr)
  if (me == n - 1) call check(rmax == total, __LINE__)
  call MPI_Barrier(comm, ierr)
  allocate (all(n), back(n), counts(n), displs(n))
  do i = 1, n
    all(i) = me * 100 + (i - 1)
    counts(i) = 1
    displs(i) = i - 1
  end do
  call MPI_Alltoall(all, 1, MPI_INTEGER, back, 1, MPI_INTEGER, comm, ierr)
  do i = 1, n
    call check(back(i) == (i - 1) * 100 + me, __LINE__)
  end do
  call MPI_Alltoallv(all, counts, displs, MPI_INTEGER, back, counts, displs, MPI_INTEGER, comm, ierr)
  call MPI_Allgather(me, 1, MPI_INTEGER, back, 1, MPI_INTEGER, comm, ierr)
  do i = 1, n
    call check(back(i) == i - 1, __LINE__)
  end do
  call MPI_Allgatherv(me, 1, MPI_INTEGER, back, counts, displs, MPI_INTEGER, comm, ierr)
  ! The root gathers in place: its own value is already in back(1).
  back = -1
  if (me == 0) then
    back(1) = 0
    call MPI_Gather(MPI_IN_PLACE, 1, MPI_INTEGER, back, 1, MPI_INTEGER, 0, comm, ierr)
    do i = 1, n
      call check(back(i) == i - 1, __LINE__)
    end do
  else
    call MPI_Gather(me, 1, MPI_INTEGER, back, 1, MPI_INTEGER, 0, comm, ierr)
  end if
  call MPI_Gatherv(me, 1, MPI_INTEGER, back, counts, displs, MPI_INTEGER, 0, comm, ierr)
  one = -1
  call MPI_Scatter(all, 1, MPI_INTEGER, one, 1, MPI_INTEGER, 0, comm, ierr)
  call MPI_Scatterv(all, counts, displs, MPI_INTEGER, one, 1, MPI_INTEGER, 0, comm, ierr)
  call MPI_Reduce_scatter(all, red, counts, MPI_INTEGER, MPI_SUM, comm, ierr)
  deallocate (all, back, counts, displs)
end subroutine collectives

! Rank 0 takes one message from every other rank, in whatever order they arrive.
subroutine any_source(rank, size)
  use checks
  implicit none
  include 'mpif.h'
  integer, intent(in) :: rank, size
  integer :: i, v, seen, ierr, q, status(MPI_STATUS_SIZE)
  logical :: flag, done
  if (rank == 0) then
    seen = 0
    do i = 1, size - 1
      call MPI_Recv(v, 1, MPI_INTEGER, MPI_ANY_SOURCE, 40, MPI_COMM_WORLD, status, ierr)
      call check(v == status(MPI_SOURCE), __LINE__)
      seen = seen + v
    end do
    call check(seen == size * (size - 1) / 2, __LINE__)
    do i = 1, size - 1
      call MPI_Irecv(v, 1, MPI_INTEGER, MPI_ANY_SOURCE, MPI_ANY_TAG, MPI_COMM_WORLD, q, ierr)
      call MPI_Iprobe(MPI_ANY_SOURCE, MPI_ANY_TAG, MPI_COMM_WORLD, flag, MPI_STATUS_IGNORE, ierr)
      done = .false.
      do while (.not. done)
        call MPI_Test(q, done, status, ierr)
      end do
      call check(v == status(MPI_SOURCE) .and. status(MPI_TAG) == 41 + v, __LINE__)
    end do
  else
    call work(50000 * rank)
    call MPI_Send(rank, 1, MPI_INTEGER, 0, 40, MPI_COMM_WORLD, ierr)
    call MPI_Send(rank, 1, MPI_INTEGER, 0, 41 + rank, MPI_COMM_WORLD, ierr)
  end if
end subroutine any_source

program phases
  use mpi
  use checks
  implicit none
  integer :: rank, size, ierr, half, dup, s, prefix, never, nothing
  integer :: cancelled(MPI_STATUS_SIZE)
  logical :: flag
  call MPI_Init(ierr)
  call MPI_Comm_rank(MPI_COMM_WORLD, rank, ierr)
  call MPI_Comm_size(MPI_COMM_WORLD, size, ierr)
  call work(500000)
  call ring(rank, size)
  call halo(rank, size)
  call collectives(MPI_COMM_WORLD)
  call MPI_Comm_split(MPI_COMM_WORLD, mod(rank, 2), size - rank, half, ierr)
  call collectives(half)
  call MPI_Comm_dup(MPI_COMM_WORLD, dup, ierr)
  call collectives(dup)
  call MPI_Comm_free(dup, ierr)
  call MPI_Comm_free(half, ierr)
  call any_source(rank, size)
  ! A receive nobody sends to, cancelled: left out of the trace.
  call MPI_Irecv(nothing, 1, MPI_INTEGER, MPI_ANY_SOURCE, 99, MPI_COMM_WORLD, never, ierr)
  call MPI_Cancel(never, ierr)
  call MPI_Wait(never, cancelled, ierr)
  call MPI_Test_cancelled(cancelled, flag, ierr)
  call check(flag, __LINE__)
  s = 1
  call MPI_Scan(s, prefix, 1, MPI_INTEGER, MPI_SUM, MPI_COMM_WORLD, ierr)
  call check(prefix == rank + 1, __LINE__)
  call work(300000)
  call MPI_Finalize(ierr)
end program phases
