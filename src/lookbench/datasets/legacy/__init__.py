"""Legacy fashion benchmarks (DeepFashion In-shop, DeepFashion2, Street2Shop, Fashion200K, FashionIQ) read from
their official distributions into lookbench snapshots and scored by their official protocols."""
