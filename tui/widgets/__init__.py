"""The app's widgets: the timeline (a pure viewport and state, a painter, the thin widget), the
table view, the details, the overview tree, the column chooser."""
