"""A model's identity (`ModelMeta`, its spec, the encoder protocol, preprocessing) and the kinds that load it."""
