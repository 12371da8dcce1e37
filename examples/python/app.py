from shop.pricing import Cart, compute


def receipt() -> str:
    cart = Cart()
    cart.add("crème brûlée ☕", 4.5, 2)
    label = "Total: 😀"; total = cart.total()
    return f"{label} {total:.2f}"


def broken() -> int:
    return compute(1.0, 2)  # deliberate type error: a float where an int is declared
