// ServerTrust: see README for the layout.
