"""What a file or folder holds: profile layouts, separate runs, the clocks that align them."""
