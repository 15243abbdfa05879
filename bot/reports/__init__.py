"""Reports for instructors: the cohort's figures, its CSV and its HTML page."""
