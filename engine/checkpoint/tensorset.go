package checkpoint

import "fmt"

// TensorSet is a set of named tensors held in host memory, in file order.
// Tensors read from one file may share backing arrays (two views of one torch
// storage), so treat Data as read-only.
type TensorSet struct {
	names  []string
	byName map[string]*Tensor
}

// NewTensorSet returns an empty set.
func NewTensorSet() *TensorSet { return &TensorSet{byName: map[string]*Tensor{}} }

// Add appends t; a second tensor with the same name is refused.
func (s *TensorSet) Add(t *Tensor) error {
	if s.byName == nil {
		s.byName = map[string]*Tensor{}
	}
	if _, dup := s.byName[t.Name]; dup {
		return fmt.Errorf("duplicate tensor %q", t.Name)
	}
	s.names = append(s.names, t.Name)
	s.byName[t.Name] = t
	return nil
}

// Get returns the tensor called name, or nil.
func (s *TensorSet) Get(name string) *Tensor { return s.byName[name] }

// Names lists the tensor names in file order. The slice is a copy.
func (s *TensorSet) Names() []string { return append([]string(nil), s.names...) }

// Len is the number of tensors.
func (s *TensorSet) Len() int { return len(s.names) }
