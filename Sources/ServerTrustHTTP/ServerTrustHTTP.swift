// ServerTrustHTTP: see README for the layout.
