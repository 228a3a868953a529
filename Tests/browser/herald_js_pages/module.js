// The module wrapping's two exports, for test_herald_js.py: the default one and the named one.
import Herald, { Herald as NamedHerald } from "/herald.mjs";

window.moduleExports = { sameObject: Herald === NamedHerald, start: typeof Herald.start, version: Herald.version };
