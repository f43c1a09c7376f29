"""`paperatlas bench ...`: benchmarks that print numbers beside a baseline measured in the same run."""
