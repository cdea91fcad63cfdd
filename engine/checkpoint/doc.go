// Package checkpoint owns reading and writing checkpoint files: safetensors
// (single file or sharded, BF16/F16/F32/F8_E4M3 with block scales, integer and
// bool tensors), torch .pth archives through a restricted unpickler that
// executes nothing, .npy arrays, and the staged loader that streams large
// files to the GPU.
//
// It knows file formats only: which tensor means what in Drama 3 belongs to
// engine/drama3.
//
// Where to start:
//
//   - torch .pth (torch.save zip format): ReadTorchFile / ReadTorch return a
//     TensorSet (file order; Get, Names). Only the opcodes and globals of a
//     tensor state dict are known (OrderedDict, _rebuild_tensor_v2,
//     _rebuild_parameter, torch.*Storage); anything else is refused by name.
//   - safetensors: OpenSafetensors(file | directory | index.json) reads and
//     validates the headers only and returns an Index of TensorInfo (name,
//     dtype, shape, file, offset, size) in file-offset order; ReadTensor,
//     ReadTensorInto and ReadAll read data on demand; ReadDequantFP8 /
//     FP8Scale / DequantFP8Tensor pair an F8_E4M3 weight with its
//     "<name>_scale_inv" block scales.
//   - writing: WriteSafetensors (one file) and WriteSafetensorsSharded
//     (shards + model.safetensors.index.json): deterministic bytes, written
//     atomically.
//   - loading large checkpoints: Index.Load streams every tensor in file-offset
//     order through two caller-allocated buffers (LoadOptions.Alloc, e.g.
//     pinned memory), with O_DIRECT where possible, and reports a LoadResult.
//   - element types: DType, Tensor.Float32s, the BF16/F16/F8E4M3 conversions,
//     DequantFP8Blocks.
//
// Every reader treats its input as untrusted: errors name the file and the
// tensor (or opcode, global, entry), nothing panics, and no allocation is
// sized by a declared length that the file's real size does not back.
package checkpoint
