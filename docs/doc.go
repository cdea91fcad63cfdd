// Package docs is the project's documentation (README.md at the root,
// USER.md, API.md, openapi.yaml, CONTRIBUTING.md, MODEL.md, PERF.md here).
// It holds no code: its tests keep the README short and its map true, and
// every relative link in the docs pointing at a file and heading that exist.
package docs
