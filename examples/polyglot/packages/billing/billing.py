def invoice_total(amounts: list[float]) -> float:
    return sum(amounts)


label: str = invoice_total([1.0, 2.0])  # deliberate type error
