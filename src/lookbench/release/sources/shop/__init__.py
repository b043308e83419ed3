"""`shop` source: a polite crawler of product pages (robots.txt, sitemaps, JSON-LD/OpenGraph, WARC)."""
