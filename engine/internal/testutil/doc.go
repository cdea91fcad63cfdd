// Package testutil holds what several engine packages' tests and benchmarks
// share; nothing outside tests imports it.
package testutil
