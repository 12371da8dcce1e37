"""Prices and totals for the café (naïve example)."""


def compute(price: float, quantity: int) -> float:
    """Return the total for `quantity` items at `price` each."""
    return price * quantity


class Cart:
    """A shopping cart."""

    def __init__(self) -> None:
        self.items: list[tuple[str, float, int]] = []

    def add(self, name: str, price: float, quantity: int = 1) -> None:
        self.items.append((name, price, quantity))

    def total(self) -> float:
        return sum(compute(p, q) for _, p, q in self.items)
