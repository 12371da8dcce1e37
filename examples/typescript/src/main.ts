import { Circle, totalArea } from "./shapes";

const label = "Ωmega 🚀"; const shapes = [new Circle(1), new Circle(2)];
export const sum: number = totalArea(shapes);
export const wrong: string = totalArea(shapes); // deliberate type error
console.log(label, sum, wrong);
