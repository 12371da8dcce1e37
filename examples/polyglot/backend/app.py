def greet(name: str) -> str:
    return "hello " + name


count: int = greet("world")  # deliberate type error
