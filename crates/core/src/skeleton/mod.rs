//! Analytic skeleton models: parallel matrix multiplication (seed 002) and hypercube divide and conquer (seed 004).
