#!/usr/bin/env python3
"""Backbone goldens from HF transformers' Qwen3_5MoeForCausalLM (float32).

Usage (on the GPU machine, transformers 5.17, torch 2.11):
    python3 tools/oracle/backbone.py OUTDIR CKPT_DIR [CKPT_DIR ...]

Each CKPT_DIR is a checkpoint in the Drama 3 layout (config.json with a
text_config, model.safetensors or an index + shards, block-FP8 routed
experts), e.g. written by `proscenium make-tiny`. For each it:
  1. builds a Qwen3_5MoeTextConfig from text_config and a float32
     Qwen3_5MoeForCausalLM (eager attention, the plain-PyTorch conv and delta
     rule: the hub kernels are not reachable offline);
  2. loads every backbone tensor: BF16 -> float32, FP8 blocks x weight_scale_inv
     -> float32, per-expert gate/up/down fused onto transformers' layout
     (gate_up_proj [E, 2I, H], gate rows first; down_proj [E, H, I]); refuses
     to run if any model parameter is left unassigned (strict load);
  3. runs several id sequences (one > 64 rows to cross the 64-row DeltaNet
     chunk, one with given input embeddings in place of some rows) and writes
     per-row final-norm hidden states, per-layer outputs for the long
     sequence, and HF's own incremental (prefill + one row at a time) error;
  4. writes OUTDIR/<name>/manifest.json + .npy files (<name> = the
     checkpoint folder's name).
"""

import json
import os
import re
import sys

import numpy as np
import torch

import transformers
from safetensors.torch import load_file
from transformers import Qwen3_5MoeForCausalLM, Qwen3_5MoeTextConfig


def load_checkpoint(ckpt):
    index = os.path.join(ckpt, "model.safetensors.index.json")
    if os.path.exists(index):
        with open(index) as f:
            files = sorted(set(json.load(f)["weight_map"].values()))
    else:
        files = ["model.safetensors"]
    tensors = {}
    for name in files:
        tensors.update(load_file(os.path.join(ckpt, name)))
    return tensors


def backbone_prefix(tensors):
    cands = [k[: -len("embed_tokens.weight")] for k in tensors if k.endswith("embed_tokens.weight")]
    cands = [p for p in cands if p + "layers.0.input_layernorm.weight" in tensors]
    if len(cands) != 1:
        raise SystemExit(f"backbone prefix: want exactly one, found {cands}")
    return cands[0]


def dequant(tensors, name, block):
    """float32 value of tensor `name`, applying its FP8 block scales if any."""
    t = tensors[name]
    if t.dtype == torch.float8_e4m3fn:
        scale = tensors[name + "_scale_inv"].float()
        rows, cols = t.shape
        s = scale.repeat_interleave(block[0], 0)[:rows].repeat_interleave(block[1], 1)[:, :cols]
        return t.float() * s
    return t.float()


def hf_config(text):
    rope = dict(text.get("rope_parameters") or {})
    theta = rope.get("rope_theta", text.get("rope_theta"))
    prf = rope.get("partial_rotary_factor", text.get("partial_rotary_factor"))
    cfg = Qwen3_5MoeTextConfig(
        vocab_size=text["vocab_size"],
        hidden_size=text["hidden_size"],
        num_hidden_layers=text["num_hidden_layers"],
        layer_types=text["layer_types"],
        num_attention_heads=text["num_attention_heads"],
        num_key_value_heads=text["num_key_value_heads"],
        head_dim=text["head_dim"],
        rms_norm_eps=text["rms_norm_eps"],
        rope_parameters={"rope_type": "default", "rope_theta": theta, "partial_rotary_factor": prf},
        partial_rotary_factor=prf,
        linear_conv_kernel_dim=text["linear_conv_kernel_dim"],
        linear_key_head_dim=text["linear_key_head_dim"],
        linear_value_head_dim=text["linear_value_head_dim"],
        linear_num_key_heads=text["linear_num_key_heads"],
        linear_num_value_heads=text["linear_num_value_heads"],
        num_experts=text["num_experts"],
        num_experts_per_tok=text["num_experts_per_tok"],
        moe_intermediate_size=text["moe_intermediate_size"],
        shared_expert_intermediate_size=text["shared_expert_intermediate_size"],
        tie_word_embeddings=False,
        max_position_embeddings=4096,
    )
    return cfg, theta, prf


def state_dict(tensors, prefix, cfg, block):
    sd = {}
    used = set()
    experts = {}
    pat = re.compile(r"layers\.(\d+)\.mlp\.experts\.(\d+)\.(gate_proj|up_proj|down_proj)\.weight$")
    for name in tensors:
        if not name.startswith(prefix) or name.endswith("_scale_inv"):
            continue
        rest = name[len(prefix):]
        m = pat.match(rest)
        if m:
            experts.setdefault(int(m.group(1)), {}).setdefault(int(m.group(2)), {})[m.group(3)] = dequant(tensors, name, block)
        else:
            sd["model." + rest] = dequant(tensors, name, block)
        used.add(name)
        if name + "_scale_inv" in tensors:
            used.add(name + "_scale_inv")
    for layer, per in experts.items():
        E = cfg.num_experts
        if sorted(per) != list(range(E)):
            raise SystemExit(f"layer {layer}: experts {sorted(per)}, want 0..{E - 1}")
        gate_up = torch.stack([torch.cat([per[e]["gate_proj"], per[e]["up_proj"]], 0) for e in range(E)])
        down = torch.stack([per[e]["down_proj"] for e in range(E)])
        sd[f"model.layers.{layer}.mlp.experts.gate_up_proj"] = gate_up
        sd[f"model.layers.{layer}.mlp.experts.down_proj"] = down
    # The LM head does not touch the hidden states; it must still be assigned.
    lm = [k for k in ("lm_head.weight", prefix + "lm_head.weight") if k in tensors]
    if lm:
        sd["lm_head.weight"] = tensors[lm[0]].float()
        used.add(lm[0])
    else:
        sd["lm_head.weight"] = sd["model.embed_tokens.weight"].clone()
    ignored = sorted(set(tensors) - used)
    return sd, ignored


def run_whole(model, ids=None, embeds=None, hooks=None):
    with torch.no_grad():
        out = model.model(input_ids=ids, inputs_embeds=embeds, use_cache=False)
    return out.last_hidden_state[0]


def rel_rows(a, b):
    return float(((a - b).norm(dim=-1) / b.norm(dim=-1)).max())


def goldens(ckpt, outdir):
    with open(os.path.join(ckpt, "config.json")) as f:
        root = json.load(f)
    text = root["text_config"]
    qc = root.get("quantization_config") or {}
    block = qc.get("weight_block_size", [128, 128])
    cfg, theta, prf = hf_config(text)
    # Plain PyTorch everywhere: eager attention, the eager per-expert loop.
    for c in (cfg,):
        c._attn_implementation = "eager"
        c._experts_implementation = "eager"
    torch.manual_seed(0)
    model = Qwen3_5MoeForCausalLM(cfg).float().eval()
    model.config._attn_implementation = "eager"
    model.config._experts_implementation = "eager"
    print("attention:", model.config._attn_implementation, "experts:", model.config._experts_implementation)
    rot = model.model.rotary_emb.inv_freq.numel() * 2
    want_rot = int(round(text["head_dim"] * prf))
    if rot != want_rot:
        raise SystemExit(f"HF rotary dims {rot}, config says {want_rot}")

    tensors = load_checkpoint(ckpt)
    prefix = backbone_prefix(tensors)
    sd, ignored = state_dict(tensors, prefix, cfg, block)
    params = dict(model.named_parameters())
    missing = sorted(set(params) - set(sd))
    unexpected = sorted(set(sd) - set(params))
    if missing or unexpected:
        raise SystemExit(f"{ckpt}: parameters not assigned {missing}; checkpoint tensors with no parameter {unexpected}")
    for k, v in sd.items():
        if tuple(params[k].shape) != tuple(v.shape):
            raise SystemExit(f"{k}: checkpoint shape {tuple(v.shape)}, HF wants {tuple(params[k].shape)}")
    # Every parameter is assigned (checked above); buffers (rotary inv_freq)
    # stay as HF computes them.
    res = model.load_state_dict(sd, strict=False)
    if res.unexpected_keys or set(res.missing_keys) & set(params):
        raise SystemExit(f"load_state_dict: missing {res.missing_keys}, unexpected {res.unexpected_keys}")

    name = os.path.basename(os.path.normpath(ckpt))
    od = os.path.join(outdir, name)
    os.makedirs(od, exist_ok=True)
    V, H = cfg.vocab_size, cfg.hidden_size
    g = torch.Generator().manual_seed(1234)
    seqs = [
        ("short", torch.randint(0, V, (7,), generator=g)),
        ("long", torch.randint(0, V, (150,), generator=g)),
        ("chunk", torch.randint(0, V, (64,), generator=g)),
    ]
    manifest = {
        "transformers": transformers.__version__,
        "torch": torch.__version__,
        "checkpoint": name,
        "backbone_prefix": prefix,
        "ignored_tensors": len(ignored),
        "rotary_dims": rot,
        "experts_implementation": str(getattr(cfg, "_experts_implementation", None)),
        "attn_implementation": str(getattr(model.config, "_attn_implementation", None)),
        "sequences": [],
    }

    layer_out = []
    hooks = [layer.register_forward_hook(lambda m, i, o: layer_out.append((o[0] if isinstance(o, tuple) else o)[0].detach().clone()))
             for layer in model.model.layers]
    for sname, ids in seqs:
        layer_out.clear()
        hid = run_whole(model, ids=ids[None])
        entry = {"name": sname, "ids": ids.tolist(), "hidden": f"{sname}_hidden.npy"}
        np.save(os.path.join(od, entry["hidden"]), hid.numpy().astype(np.float32))
        if sname == "long":
            layers = torch.stack(layer_out)
            entry["layers"] = f"{sname}_layers.npy"
            np.save(os.path.join(od, entry["layers"]), layers.numpy().astype(np.float32))
            # HF's own incremental use: prefill 70, then one row at a time.
            try:
                with torch.no_grad():
                    out = model.model(input_ids=ids[None, :70], use_cache=True)
                    pkv, rows = out.past_key_values, [out.last_hidden_state[0]]
                    for t in range(70, len(ids)):
                        out = model.model(input_ids=ids[None, t:t + 1], past_key_values=pkv, use_cache=True)
                        pkv = out.past_key_values
                        rows.append(out.last_hidden_state[0])
                inc = torch.cat(rows)
                entry["hf_incremental_max_row_rel_err"] = rel_rows(inc, hid)
            except Exception as e:
                entry["hf_incremental_error"] = repr(e)
        manifest["sequences"].append(entry)
    for h in hooks:
        h.remove()

    # Given input embeddings (audio rows): rows 5..9 replaced by random vectors.
    ids = torch.randint(0, V, (20,), generator=g)
    emb = model.model.embed_tokens(ids).detach().clone()
    given = list(range(5, 10))
    emb[given] = torch.randn(len(given), H, generator=g)
    hid = run_whole(model, embeds=emb[None])
    np.save(os.path.join(od, "embeds_input.npy"), emb.numpy().astype(np.float32))
    np.save(os.path.join(od, "embeds_hidden.npy"), hid.numpy().astype(np.float32))
    manifest["sequences"].append({"name": "embeds", "ids": ids.tolist(), "embedding_rows": given,
                                  "embeddings": "embeds_input.npy", "hidden": "embeds_hidden.npy"})
    with open(os.path.join(od, "manifest.json"), "w") as f:
        json.dump(manifest, f, indent=1)
    print(name, json.dumps({k: v for k, v in manifest.items() if k != "sequences"}))
    for s in manifest["sequences"]:
        print(" ", s["name"], len(s["ids"]), {k: v for k, v in s.items() if k.startswith("hf_")})


def dump_source(outdir):
    """The installed reference's code for the functions the goldens rest on."""
    import inspect
    from transformers.models.qwen3_5_moe import modeling_qwen3_5_moe as mq
    names = ["l2norm", "torch_chunk_gated_delta_rule", "torch_recurrent_gated_delta_rule", "causal_conv1d_fn",
             "Qwen3_5MoeRMSNormGated", "Qwen3_5MoeRMSNorm", "Qwen3_5MoeGatedDeltaNet", "Qwen3_5MoeAttention",
             "apply_rotary_pos_emb", "Qwen3_5MoeTextRotaryEmbedding", "Qwen3_5MoeTopKRouter",
             "Qwen3_5MoeSparseMoeBlock", "Qwen3_5MoeExperts", "Qwen3_5MoeDecoderLayer"]
    with open(os.path.join(outdir, "hf_source.txt"), "w") as f:
        f.write(f"transformers {transformers.__version__}, torch {torch.__version__}\n")
        for n in names:
            obj = getattr(mq, n, None)
            try:
                f.write(f"\n# ---- {n}\n" + inspect.getsource(obj))
            except Exception as e:
                f.write(f"\n# ---- {n}: {e!r}\n")


def main():
    if len(sys.argv) < 3:
        raise SystemExit(__doc__)
    os.makedirs(sys.argv[1], exist_ok=True)
    dump_source(sys.argv[1])
    torch.set_num_threads(max(1, os.cpu_count() or 1))
    for ckpt in sys.argv[2:]:
        goldens(ckpt, sys.argv[1])


if __name__ == "__main__":
    main()
