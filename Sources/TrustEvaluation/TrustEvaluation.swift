// TrustEvaluation: see README for the layout.
