package cuda

// StepRoute is one row's routing at one layer of a step, as the backbone's
// routing log keeps it (Backbone.KeepRoutes, TakeFrames.TapRoutes). It
// builds without the cuda tag so that the tools comparing two runs'
// routing (cmd/proscenium-gpu take_routes.go) test without a GPU.
type StepRoute struct {
	Experts []int32   // the k experts chosen, in the router's order
	Logits  []float32 // the router's logits, one an expert
}
