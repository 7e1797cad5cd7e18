"""The app's widgets: the timeline and its painters, the table view, the details, the overview
tree.
"""
