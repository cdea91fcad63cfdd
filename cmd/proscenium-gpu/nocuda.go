//go:build !cuda

// Command proscenium-gpu is the GPU worker (see main.go). Built without the
// cuda tag it has no GPU code: it says so, on stdout where the client reads
// the reason, and exits.
package main

import (
	"fmt"
	"os"
)

func main() {
	fmt.Println("this proscenium-gpu was built without the cuda build tag: build it with `make gpu-worker`")
	os.Exit(1)
}
