"""Near-duplicate images: sha256, mirror-robust pHash checked by colour, crop windows, earlier versions' stores."""
