"""Small questions to an opened index: slices by name, one slice's details, rows at a zoom, args.
"""
