// Loads the ES-module wrapping of herald.js and the runner; test_conformance.py calls window.runVector(vector).
import Herald from "/herald.mjs";
import { runVector } from "/runner.js";

window.runVector = (vector) => runVector(Herald, vector);
window.conformanceReady = true;
