//! Communication models: Hockney, LogGP and collective algorithms.
