"""Questions asked of an opened profile: where the step time goes, and what to fix first."""
