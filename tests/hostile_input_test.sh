#!/usr/bin/env bash
# Hostile input on the real binary (issue 14): overflowing, non-finite, negative, zero and hex
# values for every numeric flag of every estimating subcommand; configs with absurd shapes;
# non-UTF-8 paths echoed into JSON; FIFOs, directories and 1 GB files where a file belongs. Each
# must end within the time limit with a one-line error and exit 2 (or, where the value is a fair
# one, exit 0 with only finite figures): never a crash, a hang, an abort or an absurd answer.
# Usage: hostile_input_test.sh GPUPLAN SOURCE_DIR [SECONDS_PER_RUN [full|short]]
# `short` (the sanitizer build, ~10x slower to start) tries each flag with the values that overflow
# or are not finite, instead of the whole list; the release build runs the whole list.
set -u
bin="$1"
root="$2"
limit="${3:-5}"
size="${4:-full}"
pass=0
fail=0
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
export HF_HUB_OFFLINE=1 NO_COLOR=1 COLUMNS=100 XDG_CACHE_HOME="$tmp/cache"

run() {  # run ARGS...: sets $got, output in $tmp/out and $tmp/err
  timeout -k 2 "$limit" "$bin" "$@" >"$tmp/out" 2>"$tmp/err" </dev/null
  got=$?
}

# Newline-ended lines of standard error, and whether the first is gpuplan's error line: read with
# builtins, since a fork per check costs as much as the run itself over 3,000 runs.
err_lines() {  # sets $lines and $first
  lines=0
  first=""
  local line
  while IFS= read -r line; do
    [ "$lines" -eq 0 ] && first="$line"
    lines=$((lines + 1))
  done <"$tmp/err"
}

bad() {  # bad NAME -- ARGS...: exit 2 with exactly one line on stderr, in time
  local name="$1"
  shift 2
  run "$@"
  local lines first
  err_lines
  if [ "$got" -eq 124 ] || [ "$got" -eq 137 ]; then
    echo "FAIL $name: no answer within ${limit}s: $*"; fail=$((fail + 1))
  elif [ "$got" -ne 2 ] || [ "$lines" -ne 1 ] || [[ "$first" != "gpuplan: error: "* ]]; then
    echo "FAIL $name: exit $got with $lines stderr lines, want 2 and one 'gpuplan: error:' line: $*"
    head -c 400 "$tmp/err"; head -c 300 "$tmp/out"; fail=$((fail + 1))
  else
    pass=$((pass + 1))
  fi
}

# A value that may be fair (0 meaning "default", hex 0x10, a huge but finite count): exit 0 with
# no non-finite or overflowed figure in the output, or exit 2 with one line. Nothing else.
sane() {  # sane NAME -- ARGS...
  local name="$1"
  shift 2
  run "$@"
  local lines first
  err_lines
  if [ "$got" -eq 0 ]; then
    # fmt prints "inf"/"nan"; a wrapped int64 prints as -9223372036854775808; e+100 and up is absurd.
    # (one grep: the first alternative is grep -w's whole word, spelled out)
    if grep -qE -- '(^|[^[:alnum:]_])-?(inf|nan)([^[:alnum:]_]|$)|-9223372036854775808|e\+[0-9]{3}' "$tmp/out"; then
      echo "FAIL $name: exit 0 with a non-finite or overflowed figure: $*"; grep -wE -- '-?(inf|nan)|e\+[0-9]{3}' "$tmp/out" | head -3
      fail=$((fail + 1))
    else
      pass=$((pass + 1))
    fi
  elif [ "$got" -eq 2 ] && [ "$lines" -eq 1 ]; then
    pass=$((pass + 1))
  else
    echo "FAIL $name: exit $got with $lines stderr lines: $*"; head -c 400 "$tmp/err"; fail=$((fail + 1))
  fi
}

profile="$root/tests/fixtures/profiles/mpt7b-a100-8gpu.json"

# ---- the inputs the issue names --------------------------------------------------------------
bad tp_pp_overflow -- memory --model llama-3.1-8b --tp 4294967296 --pp 4294967296
bad tp_pp_overflow_train -- train --model llama-3.1-8b --gpu h100-sxm --tp 4294967296 --pp 4294967296
bad dp_overflow -- train --model llama-3.1-8b --gpu h100-sxm --tp 8 --dp 2305843009213693952
bad global_batch_overflow -- train --model gpt2 --gpu h100-sxm --micro-batch 1048576 --gpus 1048576 --global-batch 4611686018427387904
bad global_batch_overflow_huge_dp -- train --model gpt2 --gpu h100-sxm --micro-batch 1048576 --dp 8796093022208 --global-batch 5
bad predict_gpus_int64_max -- predict --from "$profile" --gpu h100-sxm --gpus 9223372036854775807
bad predict_gpus_2_32 -- predict --from "$profile" --gpu h100-sxm --gpus 4294967296
bad predict_source_gpus_huge -- predict --from "$profile" --gpu h100-sxm --source-gpus 9223372036854775807
bad predict_grad_accum_huge -- predict --from "$profile" --gpu h100-sxm --grad-accum 9223372036854775807
bad predict_batch_huge -- predict --from "$profile" --gpu h100-sxm --batch 9223372036854775807
bad dataset_tokens_inf -- train --model gpt2 --gpu h100-sxm --epochs 1 --dataset-tokens inf
bad dataset_tokens_neg_inf -- train --model gpt2 --gpu h100-sxm --epochs 1 --dataset-tokens -inf
bad predict_dataset_tokens_inf -- predict --from "$profile" --gpu h100-sxm --dataset-tokens inf
bad grad_accum_int64_max -- train --model gpt2 --gpu h100-sxm --grad-accum 9223372036854775807
bad grad_accum_2_63_json -- train --model gpt2 --gpu h100-sxm --grad-accum 9223372036854775807 --tokens 1e9 --json
bad tokens_inf -- train --model gpt2 --gpu h100-sxm --tokens inf
bad tokens_1e300 -- train --model gpt2 --gpu h100-sxm --tokens 1e300
bad epochs_inf -- train --model gpt2 --gpu h100-sxm --epochs inf --dataset-tokens 1e9
bad epochs_1e300 -- train --model gpt2 --gpu h100-sxm --epochs 1e300 --dataset-tokens 1e9
bad epochs_times_dataset -- train --model gpt2 --gpu h100-sxm --epochs 1e6 --dataset-tokens 1e15
bad plan_tokens_inf -- plan --model gpt2 --gpu h100-sxm --gpus 8 --tokens inf
bad plan_tokens_1e300 -- plan --model gpt2 --gpu h100-sxm --gpus 8 --tokens 1e300
bad plan_global_batch_huge -- plan --model gpt2 --gpu h100-sxm --gpus 8 --global-batch 9223372036854775807

# ---- configs with absurd shapes ----------------------------------------------------------------
config() {  # config NAME JSON-FRAGMENT: a llama config.json with the fragment's keys replaced
  python3 - "$root/tests/fixtures/tiny-llama-config.json" "$tmp/$1.json" "$2" <<'EOF'
import json, sys
c = json.load(open(sys.argv[1]))
c.update(json.loads(sys.argv[3]))
json.dump(c, open(sys.argv[2], "w"))
EOF
}
config huge_hidden '{"hidden_size": 9223372036854775807, "num_attention_heads": 1, "num_key_value_heads": 1}'
config hidden_2_40 '{"hidden_size": 1099511627776, "num_attention_heads": 1, "num_key_value_heads": 1}'
config huge_layers '{"num_hidden_layers": 9223372036854775807}'
config huge_vocab '{"vocab_size": 9223372036854775807}'
config huge_intermediate '{"intermediate_size": 9223372036854775807}'
config huge_heads '{"num_attention_heads": 9223372036854775807, "num_key_value_heads": 1}'
config huge_kv_heads '{"num_key_value_heads": -9223372036854775808}'
config huge_experts '{"num_local_experts": 9223372036854775807, "num_experts_per_tok": 2}'
config experts_2_32 '{"num_local_experts": 4294967296, "num_experts_per_tok": 4294967296}'
config huge_expert_ffn '{"num_local_experts": 8, "num_experts_per_tok": 2, "moe_intermediate_size": 9223372036854775807}'
config huge_position '{"max_position_embeddings": 9223372036854775807}'
config float_hidden '{"hidden_size": 1e300}'
config negative_hidden '{"hidden_size": -64}'
config zero_layers '{"num_hidden_layers": 0}'
config string_layers '{"num_hidden_layers": "2"}'
config wide_and_deep '{"hidden_size": 1048576, "intermediate_size": 4194304, "num_hidden_layers": 65536, "num_attention_heads": 65536, "num_key_value_heads": 65536, "vocab_size": 16777216}'
for c in huge_hidden hidden_2_40 huge_layers huge_vocab huge_intermediate huge_heads huge_kv_heads huge_experts \
         experts_2_32 huge_expert_ffn float_hidden negative_hidden zero_layers string_layers wide_and_deep; do
  bad "config_${c}_memory" -- memory --model "$tmp/$c.json"
  bad "config_${c}_train" -- train --model "$tmp/$c.json" --gpu h100-sxm --json
  bad "config_${c}_infer" -- infer --model "$tmp/$c.json" --gpu h100-sxm --json
done
# A context of 2^63 tokens is only a claim: the workload's own sequence is what is sized.
sane config_huge_position -- memory --model "$tmp/huge_position.json" --json
bad config_huge_position_seq -- memory --model "$tmp/huge_position.json" --seq 9223372036854775807

# ---- every numeric flag of every estimating subcommand ----------------------------------------
# Values no flag accepts: not numbers, or not finite.
never=(nan -nan inf -inf 1e309 abc "" 0x 12abc)
# Values some flags accept and others refuse: both answers must be honest.
maybe=(-1 0 1e300 -1e300 0x10 0xffffffffffffffff 9223372036854775807 9223372036854775808 -9223372036854775808
       4294967296 2147483648 1.5 1e-300 5e-324 2T 1Ki 99999999999999999999999)
if [ "$size" = short ]; then
  never=(nan)
  maybe=(-9223372036854775808 9223372036854775807 4294967296 1e300)
fi
cfg="$root/tests/fixtures/tiny-llama-config.json"
workload_int=(--batch --seq --grad-accum --gpus --zero --tp --pp --dp --virtual-stages --lora-rank --ep)
matrix() {  # matrix NAME FLAGS -- BASE ARGS...
  local name="$1" flags="$2"
  shift 3
  for flag in $flags; do
    for v in "${never[@]}"; do bad "${name}_${flag#--}_$v" -- "$@" "$flag" "$v"; done
    for v in "${maybe[@]}"; do sane "${name}_${flag#--}_$v" -- "$@" "$flag" "$v"; done
  done
}
matrix memory "${workload_int[*]} --capacity-factor --headroom" -- memory --model "$cfg" --gpu h100-sxm --json
matrix train "${workload_int[*]} --capacity-factor --micro-batch --global-batch --tokens --epochs --dataset-tokens --gpus-per-node --network-gbps" \
  -- train --model "$cfg" --gpu h100-sxm --json
matrix train_loss_chunk "--loss-chunk-tokens" -- train --model "$cfg" --gpu h100-sxm --loss fused --json
matrix memory_loss_chunk "--loss-chunk-tokens" -- memory --model "$cfg" --gpu h100-sxm --loss chunked --json
matrix train_epochs "--epochs --dataset-tokens" -- train --model "$cfg" --gpu h100-sxm --epochs 1 --dataset-tokens 1e9
matrix infer "${workload_int[*]} --prompt --output --concurrency --gpus-per-node --network-gbps --rps --users --requests --seed \
  --prefix-hit-rate --spec-tokens --ttft-target --tpot-target" -- infer --model "$cfg" --gpu h100-sxm --json
# Serving under load: values of the load flags where the simulation runs (a rate, users, speculation).
matrix infer_rps "--rps --requests --seed --scheduler-steps" -- infer --model "$cfg" --gpu h100-sxm --rps 2 --requests 50 --json
matrix infer_users "--users --think-time" -- infer --model "$cfg" --gpu h100-sxm --users 4 --think-time 1 --requests 50 --json
matrix infer_spec "--acceptance-rate --spec-tokens" -- infer --model "$cfg" --gpu h100-sxm --spec-tokens 4 --acceptance-rate 0.7 --json
matrix plan_serving "--rps --average-rps --prompt --output --ttft-target --tpot-target --gpus-per-node --gpus" \
  -- plan --task infer --model "$cfg" --gpu h100-sxm --rps 2 --json
matrix emit_k8s "--rps --average-rps --scale-at --prompt --output" -- infer --model "$cfg" --gpu h100-sxm --rps 2 --requests 50 --emit k8s
matrix plan_emit_k8s "--scale-at" -- plan --task infer --model "$cfg" --gpu h100-sxm --rps 2 --emit k8s
matrix roofline "${workload_int[*]}" -- roofline --model "$cfg" --gpu h100-sxm --json
matrix plan "--batch --seq --grad-accum --zero --tp --pp --virtual-stages --lora-rank --ep --global-batch --tokens --gpus-per-node --network-gbps --headroom --gpus" \
  -- plan --model "$cfg" --gpu h100-sxm --gpus 1..8
matrix cost "--gpus --hours-per-month --years --electricity --pue" -- cost --gpu h100-sxm --json
matrix predict "--gpus --batch --seq --grad-accum --source-gpus --dataset-tokens" -- predict --from "$profile" --gpu h100-sxm --json
matrix gpus "--min-memory" -- gpus --json
matrix advise "--headroom" -- advise --json

# ---- non-UTF-8 paths echoed into JSON: valid JSON, never an abort ------------------------------
odd="$tmp/m$(printf '\xff\xfe')del.json"
cp "$cfg" "$odd"
valid_json() {  # valid_json NAME -- ARGS...: exit 0 and stdout is strict UTF-8 JSON
  local name="$1"
  shift 2
  run "$@"
  if [ "$got" -eq 0 ] && python3 -c "import json,sys; json.loads(open(sys.argv[1],'rb').read().decode('utf-8'))" "$tmp/out"; then
    pass=$((pass + 1))
  else
    echo "FAIL $name: exit $got or invalid JSON: $*"; head -c 300 "$tmp/err"; fail=$((fail + 1))
  fi
}
valid_json non_utf8_memory -- memory --model "$odd" --json
valid_json non_utf8_train -- train --model "$odd" --gpu h100-sxm --json
valid_json non_utf8_infer -- infer --model "$odd" --gpu h100-sxm --json
valid_json non_utf8_roofline -- roofline --model "$odd" --gpu h100-sxm --json
valid_json non_utf8_plan -- plan --model "$odd" --gpu h100-sxm --gpus 1..2 --json
bad non_utf8_missing -- memory --model "$tmp/$(printf '\xc3\x28')nope.json" --json
bad non_utf8_gpu -- memory --model "$cfg" --gpu "$(printf 'h100\xff')" --json

# ---- FIFOs, directories and 1 GB files where a file belongs -------------------------------------
mkfifo "$tmp/fifo.gguf" "$tmp/fifo.json" "$tmp/fifo.toml" "$tmp/fifo.safetensors"
mkdir -p "$tmp/dir.gguf" "$tmp/dir.json" "$tmp/dir.toml" "$tmp/fifo-model" "$tmp/fifo-config" "$tmp/big-model" "$tmp/big-config"
truncate -s 1G "$tmp/big.gguf" "$tmp/big.json" "$tmp/big.toml" "$tmp/big-model/model.safetensors" "$tmp/big-config/config.json"
cp "$cfg" "$tmp/fifo-model/config.json"
mkfifo "$tmp/fifo-model/model.safetensors" "$tmp/fifo-config/config.json"
cp "$cfg" "$tmp/big-model/config.json"
for kind in fifo dir big; do
  bad "${kind}_model_gguf" -- memory --model "$tmp/$kind.gguf"
  bad "${kind}_model_json" -- memory --model "$tmp/$kind.json"
  bad "${kind}_predict_from" -- predict --from "$tmp/$kind.json" --gpu h100-sxm
  bad "${kind}_calibration_json" -- --calibration "$tmp/$kind.json" train --model gpt2 --gpu h100-sxm
  bad "${kind}_calibration_toml" -- --calibration "$tmp/$kind.toml" train --model gpt2 --gpu h100-sxm
  bad "${kind}_catalog" -- --catalog "$tmp/$kind.toml" gpus
  bad "${kind}_prices" -- --prices "$tmp/$kind.toml" cost --gpu h100-sxm
  bad "${kind}_workload" -- advise "$tmp/$kind.toml"
done
bad fifo_model_dir_safetensors -- memory --model "$tmp/fifo-model"
bad fifo_model_dir_config -- memory --model "$tmp/fifo-config"
bad big_model_dir_safetensors -- memory --model "$tmp/big-model"
bad big_model_dir_config -- memory --model "$tmp/big-config"
bad dev_zero_model -- memory --model /dev/zero
bad dev_zero_predict -- predict --from /dev/zero --gpu h100-sxm
bad dev_zero_calibration -- --calibration /dev/zero train --model gpt2 --gpu h100-sxm

echo "hostile input: $pass passed, $fail failed"
[ "$fail" -eq 0 ]
