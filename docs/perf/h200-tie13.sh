#!/bin/bash
# tie13 (issue 27): debug-take explains every free-running divergence from the CPU — a draw
# near-tie, a routing near-tie (the CPU's top-k router margin within the router logits' rounding
# error at a row and layer of the backbone run that made the frame, confirmed by a CPU replay with
# the two experts swapped: -confirm-routing, the default), or unexplained (the run's exit status 1).
# No GPU code changed and no switch: the same runs as session 12's run 4 (docs/perf/h200-lead12-
# run4.sh: demo 100 seeds, odd 20 with the rounding baseline, 60 frames, fast), the two at once.
# ≤ 60 s expected (run 4: 49 s and 23 s one after the other; the replays add a CPU take or two a
# divergence), capped at 70. From the root of a checkout of branch tie13 (merged with main):
#   bash docs/perf/h200-tie13.sh BINDIR LOGDIR
# BINDIR holds proscenium-gpu built from that checkout (docs/perf/h200-lead6-build.sh, unpacked by
# h200-lead6-unpack.sh). Logs, the JSON reports and tie13.tgz go to LOGDIR; a summary is printed.
# Hypotheses (docs/PERF.md "tie13"): every divergence is a draw near-tie or a routing near-tie, none
# unexplained; a routing near-tie (as run 4's demo seed 41, frame 11: layer 3, experts 3|6, 4 ulps)
# comes with a confirmed swap whose replay is within rounding of the GPU's logits.
set -u
B=$(cd "$1" && pwd); O=$(mkdir -p "$2" && cd "$2" && pwd); ROOT=$PWD
[ -f $O/tokenizer.json ] || gunzip -c engine/demo/qwen3/tokenizer.json.gz > $O/tokenizer.json
START=$(date +%s); END=$(( START + 70 ))
T() { local s=$1; shift; local n=$1; shift; local left=$(( END - $(date +%s) )); [ $left -lt $s ] && s=$left
  [ $s -le 2 ] && { echo "skip $n" >> $O/steps.log; return 1; }
  local t=$(date +%s); echo "== $(date -u +%T) $n (limit $s)" >> $O/steps.log; timeout $s "$@" > $O/$n.log 2>&1; local rc=$?
  echo "rc=$rc $n $(( $(date +%s) - t ))s" >> $O/steps.log; return $rc; }
{ date -u; git -C $ROOT log --oneline -1; nvidia-smi --query-gpu=name,driver_version,memory.total --format=csv; } > $O/machine.txt 2>&1
P=$B/proscenium-gpu
for g in demo odd; do $P make-tiny -tokenizer $O/tokenizer.json -geometry $g /tmp/tie13-$g > $O/make-$g.log 2>&1; done
T 68 agree-demo-fast $P debug-take -model /tmp/tie13-demo -baseline 0 -seeds 100 -frames 60 -numerics fast -out $O/agree-demo-fast.json &
T 40 agree-odd-fast $P debug-take -model /tmp/tie13-odd -baseline 2 -seeds 20 -frames 60 -numerics fast -out $O/agree-odd-fast.json &
wait
(cd $O/.. && tar czf $O.tgz --exclude=tokenizer.json "$(basename $O)" && mv $O.tgz $O/tie13.tgz)
echo "== tie13 steps ($(( $(date +%s) - START )) s)"; grep -E "^(rc=|skip)" $O/steps.log | tr '\n' ' '; echo
echo "== failures"; grep -hE "does not match|panic:|unexplained:" $O/agree-*.log | cut -c1-400 | head -12
for f in agree-demo-fast agree-odd-fast; do
  echo "== $f"; grep -A8 "^free-running:" $O/$f.log | cut -c1-300 | head -12
  python3 - $O/$f.json <<'EOF' 2>&1 | tail -20
import json, sys
d = json.load(open(sys.argv[1])); fr = d['free_running']; tf = d['teacher_forced']
dv = fr.get('divergences') or []
print('identical %d of %d; baseline %s; teacher-forced worst %.3g, %d over' % (fr['identical_takes'], fr['seeds'],
      [b['identical_takes'] for b in (d.get('cpu_rounding_baseline') or [])], tf['worst_relative_error'], tf['vectors_over_tolerance']))
print('classes: draw %d, routing %d, unexplained %d; draw near-ties at logits <= %.3g relative' % (fr.get('draw_near_ties', -1),
      fr.get('routing_near_ties', -1), fr.get('unexplained', -1), max([x.get('logits_relative_diff', 0) for x in dv if x.get('class') == 'draw near-tie'] or [0])))
for x in dv:
    r = x.get('routing') or {}
    if x.get('class') != 'draw near-tie':
        print('  seed %d frame %d cb %d %s: logits %.3g, off from frame %d; margin %.3g (%.3g rel) bound %.3g (gamma %.3g, spread %.3g) frame %s pos %s layer %s experts %s|%s confirmed %s replay %.3g' % (
            x['seed'], x['frame'], x['codebook'], x.get('class'), x.get('logits_relative_diff', 0), x.get('first_frame_off_tolerance', -9),
            r.get('margin', -1), r.get('relative_margin', -1), r.get('bound', -1), r.get('gamma_bound', -1), r.get('measured_spread', -1),
            r.get('frame'), r.get('pos'), r.get('layer'), r.get('kth_expert'), r.get('next_expert'), r.get('confirmed'), r.get('replay_logits_diff', 0)))
ms = sorted((x.get('routing') or {}).get('margin', 9) / max((x.get('routing') or {}).get('bound', 1e-30), 1e-30) for x in dv if x.get('class') == 'draw near-tie')
print('draw near-ties: smallest routing margin / bound in their runs: %s' % ['%.3g' % m for m in ms[:5]])
EOF
done
