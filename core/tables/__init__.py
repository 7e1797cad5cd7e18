"""The profile's summary tables asked for by name, filtered, sorted and totalled."""
