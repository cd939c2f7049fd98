//! The components file (TOML): per building block a model string or a measurements file.
