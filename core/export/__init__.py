"""Writing what was opened: CSV for spreadsheets and Parquet for engines."""
