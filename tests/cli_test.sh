#!/usr/bin/env bash
# CLI behaviour on the real binary: exit codes, one-line errors naming the field, JSON shape.
set -u
bin="$1"
root="$2"
pass=0
fail=0
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

check() {  # check NAME EXPECTED_EXIT STDERR_PATTERN -- ARGS...
  local name="$1" want="$2" pattern="$3"
  shift 4
  "$bin" "$@" >"$tmp/out" 2>"$tmp/err"
  local got=$?
  local lines
  lines=$(wc -l <"$tmp/err")
  if [ "$got" -ne "$want" ]; then
    echo "FAIL $name: exit $got, want $want"; cat "$tmp/err"; fail=$((fail + 1)); return
  fi
  if [ -n "$pattern" ] && ! grep -qE -- "$pattern" "$tmp/err"; then
    echo "FAIL $name: stderr lacks /$pattern/"; cat "$tmp/err"; fail=$((fail + 1)); return
  fi
  if [ "$want" -eq 2 ] && [ "$lines" -ne 1 ]; then
    echo "FAIL $name: error is $lines lines, want 1"; cat "$tmp/err"; fail=$((fail + 1)); return
  fi
  pass=$((pass + 1))
}

json_has() {  # json_has NAME PYTHON_EXPR -- ARGS...
  local name="$1" expr="$2"
  shift 3
  if "$bin" "$@" >"$tmp/out" 2>"$tmp/err" && python3 -c "import json,sys; d=json.load(open('$tmp/out')); sys.exit(0 if ($expr) else 1)"; then
    pass=$((pass + 1))
  else
    echo "FAIL $name"; head -c 600 "$tmp/out"; cat "$tmp/err"; fail=$((fail + 1))
  fi
}

check gpus_lists 0 "" -- gpus
check unknown_command 2 "did you mean gpus" -- gpu
check unknown_gpu 2 "--gpu: unknown GPU 'h100-smx' \(did you mean h100-sxm" -- memory --model llama-3.1-8b --gpu h100-smx
check unknown_model 2 "--model: unknown model 'llama-3-8b'" -- memory --model llama-3-8b
check zero_batch 2 "--batch: must be at least 1" -- memory --model gpt2 --batch 0
check negative_batch 2 "--batch: must be at least 1" -- memory --model gpt2 --batch -3
check non_numeric_batch 2 "batch" -- memory --model gpt2 --batch lots
check absurd_seq 2 "--seq: .* absurd" -- memory --model gpt2 --seq 99999999999
check bad_task 2 "--task: unknown task 'finetune'" -- memory --model gpt2 --task finetune
check bad_tier 2 "--tier: must be" -- gpus --tier cloud
check tp_not_dividing_heads 2 "--tp: 5 does not divide" -- memory --model llama-3.1-8b --tp 5 --gpus 5
check gpus_not_multiple 2 "--gpus: 6 is not a multiple" -- memory --model llama-3.1-8b --tp 4 --gpus 6

printf '{"model_type": "llama", "num_hidden_layers": 32,' >"$tmp/broken.json"
check malformed_config 2 "broken.json: malformed JSON" -- memory --model "$tmp/broken.json"
mkdir -p "$tmp/model"
cp "$root/tests/fixtures/tiny-llama-config.json" "$tmp/model/config.json"
printf '\xff\xff\xff\xff\xff\xff\x00\x00{}' >"$tmp/model/model.safetensors"
check absurd_safetensors 2 "model.safetensors: safetensors header length .* absurd" -- memory --model "$tmp/model"
printf '\x40\x00\x00\x00\x00\x00\x00\x00{"w":' >"$tmp/model/model.safetensors"
check truncated_safetensors 2 "truncated" -- memory --model "$tmp/model"
printf '[[gpu]]\nid = "x"\n' >"$tmp/cat.toml"
check bad_catalog 2 "--catalog: .*cat.toml" -- --catalog "$tmp/cat.toml" gpus
printf '[[gpu]\n' >"$tmp/cat2.toml"
check malformed_catalog_toml 2 "malformed TOML" -- --catalog "$tmp/cat2.toml" gpus

json_has memory_json_shape "set(d['breakdown']) >= {'weights','gradients','optimizer','activations','kv_cache','overhead'} and isinstance(d['per_gpu_bytes'], int) and d['fits'] is None and d['max_batch'] is None and sum(d['breakdown'].values()) == d['per_gpu_bytes'] or abs(sum(d['breakdown'].values()) - d['per_gpu_bytes']) <= 6" -- memory --model llama-3.1-8b --json
json_has memory_fit_json "d['fits'] is True and d['max_batch'] >= 1 and d['gpu'] == 'h100-sxm'" -- memory --model llama-3.1-8b --task infer --gpu h100-sxm --json
json_has memory_nofit_json "d['fits'] is False and d['max_batch'] is None and 2 <= d['fits_when_split']['gpus'] <= 16" -- memory --model llama-3.1-70b --gpu h100-sxm --json
json_has models_json "len(d) >= 18 and all('id' in m and 'parameters' in m for m in d) and any(m['id']=='llama-3.1-8b' and m['parameters']==8030261248 for m in d)" -- models --json
json_has gpus_json_tier "len(d) >= 3 and all(g['tier']=='consumer' for g in d)" -- gpus --tier consumer --json
json_has gpus_json_min_memory "all(g['memory_gb'] >= 80 for g in d) and any(g['id']=='b200' for g in d)" -- gpus --min-memory 80 --json
json_has model_directory "d['model']['tensor_parameters'] == 4096" -- memory --model "$root/tests/fixtures/tiny-model" --json

json_has train_json "all(k in d for k in ['step_time_s','tokens_per_s','mfu','hfu','time_to_train_s','gpu_hours','breakdown']) and 0 < d['mfu'] < 1 and d['gpu_hours'] > 0" -- train --model llama-3.1-8b --gpu h100-sxm --gpus 8 --zero 3 --tokens 1e10 --json
json_has train_epochs_json "d['time_per_epoch_s'] > 0 and abs(d['time_to_train_s'] - 3 * d['time_per_epoch_s']) < 1e-6 * d['time_to_train_s']" -- train --model gpt2 --gpu rtx-4090 --epochs 3 --dataset-tokens 1e8 --json
json_has infer_json "all(k in d for k in ['ttft_s','tpot_s','output_tokens_per_s','max_concurrency']) and d['tpot_s'] > 0 and d['max_concurrency'] > 1" -- infer --model llama-3.1-8b --gpu h100-sxm --prompt 512 --output 128 --concurrency 4 --json
json_has infer_tp_json "d['tp'] == 4 and d['max_concurrency'] >= 1" -- infer --model llama-3.1-70b --gpu h100-sxm --gpus 4 --tp 4 --prompt 2048 --output 256 --json
json_has roofline_decode "d['verdict'] == 'memory-bound' and d['ridge_point'] > 100 and all(k in d['operations'][0] for k in ['name','flops','bytes','intensity','bound'])" -- roofline --model llama-3.1-8b --gpu h100-sxm --task decode --json
json_has roofline_prefill "d['verdict'] == 'compute-bound'" -- roofline --model llama-3.1-70b --gpu h100-sxm --task prefill --seq 4096 --json
json_has validate_json "d['cross_validated']['train_throughput']['rows'] >= 150 and d['cross_validated']['train_memory']['publications'] >= 10 and d['mape']['inference'] <= 0.26 and len(d['kept_not_scored']) > 0" -- validate --json
check infer_encoder 2 "--model: is an encoder" -- infer --model bert-base --gpu t4
check infer_bad_prompt 2 "--prompt: must be" -- infer --model gpt2 --gpu t4 --prompt 0
check train_needs_gpu 2 "gpu" -- train --model gpt2
check roofline_bad_task 2 "--task: must be train, prefill or decode" -- roofline --model gpt2 --gpu t4 --task serve
check train_bad_global_batch 2 "--global-batch: 10 is not a multiple" -- train --model gpt2 --gpu t4 --gpus 4 --global-batch 10

json_has plan_json "all(k in d['best'] for k in ['gpus','tp','pp','dp','micro_batch','zero','recompute','step_time_s','mfu']) and isinstance(d['runners_up'], list) and d['configs_evaluated'] > 1000" -- plan --model llama-3.1-70b --gpu h100-sxm --gpus 8..64 --seq 4096 --global-batch 256 --json
json_has plan_single_count "d['best']['gpus'] == 16" -- plan --model llama-3.1-8b --gpu a100-80gb-sxm --gpus 16 --json
json_has plan_fixed_batch "d['global_batch'] == 256 and all(p['global_batch'] == 256 for p in d['per_gpu_count']) and d['cheapest'] is not None and all(p['free_fraction'] >= 0.1 for p in d['per_gpu_count'])" -- plan --model llama-3.1-70b --gpu h100-sxm --gpus 8..64 --seq 4096 --json
json_has plan_headroom "all(p['memory_per_gpu_bytes'] <= 0.6 * p['capacity_bytes'] for p in d['per_gpu_count'])" -- plan --model llama-3.1-8b --gpu a100-80gb-sxm --gpus 1..8 --headroom 0.4 --json
# An offloaded optimizer steps on the stack's CPU optimizer (stacks.toml host_optimizer_fraction), named in
# the JSON; a stack without one refuses the flag instead of guessing its speed.
json_has train_offload_names_the_host_optimizer "d['host_optimizer']['bandwidth_fraction'] > 0 and d['host_optimizer']['host_memory_bytes_per_s'] > 0 and d['breakdown']['offload_s'] > 0" -- train --model llama-3.1-8b --gpu a100-80gb-sxm --gpus 8 --stack deepspeed --zero 2 --offload-optimizer --json
# An eager stack's host issues a layer's kernels at a sourced pace (LoRA's adapters add theirs): a
# tiny micro-batch waits for it; a compiled stack carries no such floor.
json_has train_tiny_lora_waits_for_its_host "d['stack'] == 'hf' and d['host_layer_pass_s'] > 0.00122 and d['breakdown']['host_bound_s'] > 0" -- train --model llama-2-7b --gpu a100-80gb-sxm --task lora --micro-batch 1 --seq 128 --json
# DeepSpeed's ZeRO-3 fetches ahead only its window: a smaller one exposes more of the gathers, and
# the JSON names the window; FSDP stacks and ZeRO below 3 refuse the flag.
json_has train_zero3_prefetch_window "d['zero3_prefetch_params'] == 5e7 and d['breakdown']['dp_comm_exposed_s'] > 0" -- train --model llama-2-70b --gpu a100-80gb-sxm --gpus 16 --zero 3 --stack deepspeed --zero3-prefetch 5e7 --json
check zero3_prefetch_needs_zero3 2 "--zero3-prefetch: applies to ZeRO-3" -- train --model llama-2-7b --gpu a100-80gb-sxm --gpus 8 --zero 2 --stack deepspeed --zero3-prefetch 5e7
check zero3_prefetch_needs_a_window 2 "--zero3-prefetch: stack torchtitan prefetches whole layers" -- train --model llama-2-7b --gpu a100-80gb-sxm --gpus 8 --zero 3 --stack torchtitan --zero3-prefetch 5e7
check zero3_prefetch_negative 2 "--zero3-prefetch" -- train --model llama-2-7b --gpu a100-80gb-sxm --gpus 8 --zero 3 --stack deepspeed --zero3-prefetch -5
json_has train_compiled_never_waits_for_its_host "d['host_layer_pass_s'] == 0 and d['breakdown']['host_bound_s'] == 0" -- train --model llama-2-7b --gpu a100-80gb-sxm --stack torchtitan-compile --micro-batch 1 --seq 128 --json
json_has train_host_memory_bw_names_the_host "abs(d['host_optimizer']['host_memory_bytes_per_s'] - 409.6e9) < 1e3" -- train --model llama-3.1-8b --gpu a100-80gb-sxm --gpus 2 --stack deepspeed --zero 2 --offload-optimizer --host-memory-bw 409.6 --json
check train_host_memory_bw_needs_offload 2 "host-memory-bw.*offload-optimizer" -- train --model llama-3.1-8b --gpu a100-80gb-sxm --gpus 2 --stack deepspeed --host-memory-bw 409.6
check train_host_memory_bw_negative 2 "host-memory-bw" -- train --model llama-3.1-8b --gpu a100-80gb-sxm --gpus 2 --stack deepspeed --offload-optimizer --host-memory-bw -3
check train_offload_refused_without_cpu_optimizer 2 "offload-optimizer.*megatron" -- train --model llama-3.1-8b --gpu h100-sxm --gpus 8 --stack megatron --offload-optimizer
json_has memory_fit_search "d['fit_search']['first']['gpus'] <= 8 and d['fit_search']['without_offload']['gpus'] <= 32 and 'required_headroom_fraction' in d" -- memory --model llama-3.1-70b --task full --gpu h100-sxm --json
json_has memory_headroom "d['fits'] == False and d['fits_without_headroom'] == True" -- memory --model llama-3.1-8b --task qlora --seq 512 --gpu rtx-4090 --headroom 0.8 --json
json_has cost_json "'break_even_months' in d and d['cloud_cost_usd'] > 0 and d['own_cost_usd'] > 0 and {o['mode'] for o in d['options']} >= {'on-demand','reserved-1y','reserved-3y','spot','buy'} and all('total_usd' in o for o in d['options'])" -- cost --gpu h100-sxm --gpus 8 --hours-per-month 730 --years 3 --json
json_has cost_light_use "d['cheaper'] != 'buy'" -- cost --gpu h100-sxm --hours-per-month 20 --json
json_has cost_user_prices "d['options'][0]['provider'] == 'Acme' and d['options'][0]['mode'] == 'reserved-1y'" -- cost --gpu h100-sxm --gpus 8 --prices "$root/tests/fixtures/my-quotes.toml" --json
json_has advise_default "d['recommendation']['mode'] in ('on-demand','capacity-block','reserved-1y','reserved-3y','spot','buy') and all(k in d['recommendation'] for k in ['gpu','gpus','tier','total_cost_usd','reasons','caveats']) and len(d['recommendation']['caveats']) > 0 and len(d['candidates']) > 3 and all('why' in r and 'reason' in r and 'rule' in r for r in d['rejected']) and all('memory_per_gpu_bytes' in j['plan'] and 'capacity_bytes' in j['plan'] for j in d['recommendation']['jobs'])" -- advise --json
json_has advise_headroom "all(j['plan']['free_fraction'] >= 0.3 for c in d['candidates'] for j in c['jobs']) and d['headroom']['fraction'] == 0.3" -- advise --headroom 0.3 --json
check advise_bad_headroom 2 "--headroom: must be at least 0 and below 0.9" -- advise --headroom 1.5
json_has advise_user_prices "d['recommendation'] is not None" -- advise --prices "$root/tests/fixtures/my-quotes.toml" --json
json_has advise_chat "d['recommendation'] is not None and d['recommendation']['services'][0]['tpot_s'] <= 0.05" -- advise "$root/examples/chat-service-8b.toml" --json
check plan_bad_range 2 "--gpus: must be a count or a range" -- plan --model gpt2 --gpu t4 --gpus 8..x
check cost_no_prices 2 "--gpu: no cloud or purchase price" -- cost --gpu h100-nvl --prices "$root/tests/fixtures/empty-prices.toml"
check advise_missing_file 2 "cannot open workload file" -- advise /nonexistent.toml
printf '[[training]]\nname="x"\nmodel="gpt2"\ntokens=1e9\nbogus=1\n' >"$tmp/w1.toml"
check advise_unknown_key 2 "training\[0\].bogus: unknown key" -- advise "$tmp/w1.toml"
printf '[[training]]\nname="x"\nmodel="gpt2"\ntokens="many"\n' >"$tmp/w2.toml"
check advise_wrong_type 2 "training\[0\].tokens: must be a number" -- advise "$tmp/w2.toml"
printf '[[training]]\nname="x"\nmodel="gpt2"\ntask="lora"\ntokens=1e9\nlora_targets="q,zz"\n' >"$tmp/w5.toml"
check advise_bad_lora_targets 2 "training\[0\].lora_targets: unknown module 'zz'" -- advise "$tmp/w5.toml"
printf '[[training]]\nname="x"\nmodel="gpt2"\ntokens=1e9\nlora_targets="q,v"\n' >"$tmp/w6.toml"
check advise_lora_targets_need_lora 2 "training\[0\].lora_targets: needs --task lora or qlora" -- advise "$tmp/w6.toml"
printf '[[training]]\nname="x"\nmodel="gpt2"\ntask="lora"\ntokens=1e9\ndouble_quant=false\n' >"$tmp/w6b.toml"
check advise_double_quant_needs_qlora 2 "training\[0\].double_quant: needs --task qlora" -- advise "$tmp/w6b.toml"
printf '[[training]]\nname="x"\nmodel="gpt2"\ntokens=1e9\ndeadline=2020-01-01\n' >"$tmp/w3.toml"
check advise_past_deadline 2 "deadline: 2020-01-01 is not in the future" -- advise "$tmp/w3.toml"
printf '[[training]]\nname="x"\nmodel="gpt2"\ntokens=1e9\n[constraints]\nbudget_monthly_usd=0\n' >"$tmp/w4.toml"
check advise_zero_budget 2 "budget_monthly_usd: must be positive" -- advise "$tmp/w4.toml"
check advise_markdown 0 "" -- advise --markdown

json_has predict_json "d['source_gpu'] == 'a100-80gb-sxm' and len(d['predictions']) == 2 and all(p['step_time_low_s'] <= p['step_time_s'] <= p['step_time_high_s'] for p in d['predictions'])" -- predict --from "$root/tests/fixtures/profiles/mpt7b-a100-8gpu.json" --gpu h100-sxm,l40s --json
json_has advise_profile_calibration "d['recommendation'] is not None" -- --calibration "$root/tests/fixtures/profiles/mpt7b-a100-8gpu.json" advise --json
check predict_missing_file 2 "--from: .*cannot open" -- predict --from /nonexistent.json --gpu h100-sxm
printf '{"steps": {"count": 0, "median_s": null}}' >"$tmp/nosteps.json"
check predict_no_steps 2 "--from: the profile recognised no steps" -- predict --from "$tmp/nosteps.json" --gpu h100-sxm
check predict_unknown_target 2 "--gpu: unknown GPU 'h100'" -- predict --from "$root/tests/fixtures/profiles/mpt7b-a100-8gpu.json" --gpu h100
check profile_no_command 2 "command" -- profile
check profile_bad_interval 2 "--interval: must" -- profile --interval 1ms -- true
check profile_bad_command 2 "command: cannot run 'no-such-binary-xyz'" -- profile --out "$tmp/p" -- no-such-binary-xyz
check doctor_fails_without_a_driver 1 "" -- doctor --nvml-lib /nonexistent/libnvidia-ml.so.1
json_has train_dp_flag "d['gpus'] == 16 and d['dp'] == 8 and d['tp'] == 2" -- train --model llama-3.1-8b --gpu h100-sxm --tp 2 --dp 8 --json
check train_dp_conflict 2 "--dp: dp 8 x tp 2 x pp 1 is 16 GPUs, but --gpus says 8" -- train --model llama-3.1-8b --gpu h100-sxm --tp 2 --dp 8 --gpus 8

# Software stacks (issue 9): listed as data, named on every training output, bad ids refused.
json_has stacks_json "set(['megatron','megatron-deepspeed','torchtitan','torchtitan-compile','hf','deepspeed','torchtune','unsloth']) <= set(s['id'] for s in d) and all('name' in s for s in d)" -- stacks --json
check stacks_lists 0 "" -- stacks
json_has stacks_json_fsdp_gradients "[s['fsdp'] for s in d if s['id'] == 'litgpt'][0] == {'keep_gathered_under_pp': False, 'pp_defers_grad_reduce': False, 'accumulation_defers_grad_reduce': True, 'frozen_weights_get_grads': True} and not [s for s in d if s['id'] == 'litgpt'][0]['master_weights']" -- stacks --json
check unknown_stack 2 "--stack: unknown stack 'torchtitn' \(did you mean torchtitan" -- train --model llama-3.1-8b --gpu h100-sxm --stack torchtitn
check bad_recompute 2 "--recompute: must be none, selective, op, full or every:N" -- train --model llama-3.1-8b --gpu h100-sxm --recompute every:0
check training_flag_on_inference_memory 2 "--loss: applies to training" -- memory --model gpt2 --task infer --loss chunked
check stack_on_inference_memory 2 "--stack: names a training stack" -- memory --model gpt2 --task infer --stack hf
json_has train_names_stack "d['stack'] == 'torchtitan' and d['recompute'] == 'op'" -- train --model llama-3.1-8b --gpu h100-sxm --gpus 8 --zero 3 --stack torchtitan --json
json_has train_default_stack "d['stack'] == 'megatron'" -- train --model llama-3.1-8b --gpu h100-sxm --json
json_has memory_lora_targets "d['workload']['lora_targets'] == 'q,v'" -- memory --model llama-3.1-8b --task lora --lora-targets q_proj,v_proj --json
json_has train_lora_targets "d['lora_targets'] == 'attention' or d['lora_targets'] == 'q,k,v,o'" -- train --model llama-3.1-8b --gpu a100-80gb-sxm --task lora --lora-targets attention --json
check lora_targets_unknown 2 "lora-targets.*unknown module 'qkv'" -- train --model llama-3.1-8b --gpu a100-80gb-sxm --task lora --lora-targets qkv
check lora_targets_needs_lora 2 "lora-targets.*needs --task lora or qlora" -- train --model llama-3.1-8b --gpu a100-80gb-sxm --lora-targets q,v
# Without double quantisation bitsandbytes keeps an fp32 scale per 64 weights: 4.5 bits, not 4.127.
json_has memory_no_double_quant "d['workload']['double_quant'] is False and d['memory_per_gpu_bytes'] > 0" -- memory --model llama-3.1-8b --task qlora --no-double-quant --json
json_has train_double_quant "d['double_quant'] is True" -- train --model llama-3.1-8b --gpu a100-80gb-sxm --task qlora --json
check no_double_quant_needs_qlora 2 "no-double-quant.*needs --task qlora" -- memory --model llama-3.1-8b --task lora --no-double-quant
json_has memory_names_stack "d['stack'] == 'hf'" -- memory --model llama-3.1-8b --task lora --json
json_has plan_names_stack "d['stack'] == 'torchtitan-compile' and d['best']['stack'] == 'torchtitan-compile'" -- plan --model llama-3.1-8b --gpu h100-sxm --gpus 8 --stack torchtitan-compile --json
# Issue 9: bands from the cross-validated residuals, named fabrics, loss, context parallelism, fit.
json_has train_bands "d['step_time_s_band'][0] < d['step_time_s'] < d['step_time_s_band'][1] and d['tokens_per_s_band'][0] < d['tokens_per_s'] < d['tokens_per_s_band'][1] and d['stack'] == 'megatron'" -- train --model llama-3.1-8b --gpu h100-sxm --gpus 8 --json
json_has memory_band "d['per_gpu_bytes_band'][0] < d['memory_per_gpu_bytes'] < d['per_gpu_bytes_band'][1] and d['stack'] == 'hf'" -- memory --model llama-3.1-8b --task lora --json
if "$bin" train --model llama-3.1-8b --gpu h100-sxm --gpus 8 | grep -qE "step time .*, 80% band .*–"; then pass=$((pass + 1)); else echo "FAIL train_band_text"; fail=$((fail + 1)); fi
check unknown_fabric 2 "--fabric: unknown fabric 'ib-nd' \(did you mean ib-ndr" -- train --model llama-3.1-8b --gpu h100-sxm --gpus 16 --fabric ib-nd
check unknown_loss 2 "--loss: must be standard, chunked, fused or compiled, not 'fuse' \(did you mean fused" -- memory --model llama-3.1-8b --loss fuse
check bad_cp 2 "--cp: 3 does not divide" -- train --model llama-3.1-8b --gpu h100-sxm --gpus 8 --cp 3
check unknown_attention_kernel 2 "--attention-kernel: unknown attention kernel 'fa4' \(did you mean fa2" -- train --model llama-3.1-8b --gpu h100-sxm --attention-kernel fa4
check attention_kernel_off_its_architecture 2 "--attention-kernel: attention kernel 'fa3' does not run on A100" -- plan --model llama-3.1-8b --gpu a100-80gb-sxm --gpus 8 --attention-kernel fa3
check grad_reduce_bad_value 2 "--grad-reduce: must be fp32 or bf16, not 'fp16'" -- memory --model llama-3.1-8b --task pretrain --grad-reduce fp16
# Megatron keeps bf16 gradients in fp32 (4 B each); --grad-reduce bf16 (NeMo's FP8 recipes) halves them.
"$bin" memory --model llama-3.1-8b --task pretrain --stack megatron --json > "$tmp/grads_fp32.json" 2>/dev/null
json_has grad_reduce_bf16_halves_gradients "abs(d['breakdown']['gradients'] * 2 - json.load(open('$tmp/grads_fp32.json'))['breakdown']['gradients']) < 1e6" -- memory --model llama-3.1-8b --task pretrain --stack megatron --grad-reduce bf16 --json
check tp_overlap_bad_value 2 "--tp-overlap: must be on or off, not 'yes'" -- train --model llama-3.1-70b --gpu h100-sxm --gpus 8 --tp 8 --tp-overlap yes
json_has train_unfused_attention_named "d['attention_kernel'] == 'unfused' and d['tp_overlap'] is False" -- train --model bert-large --gpu v100-32gb --precision fp16 --batch 4 --seq 512 --flash-attention off --stack hf --json
# torchtitan turns async TP on only when asked: --tp-overlap on hides most of the TP collectives.
tp_args="train --model llama-3.1-70b --gpu h100-sxm --gpus 8 --tp 8 --stack torchtitan-compile --json"
"$bin" $tp_args > "$tmp/tp_off.json" 2>/dev/null
json_has train_tp_overlap_on "d['breakdown']['tp_comm_s'] < 0.5 * json.load(open('$tmp/tp_off.json'))['breakdown']['tp_comm_s']" -- $tp_args --tp-overlap on
# `gpuplan stacks` lists the kernel ids --attention-kernel takes, with their shares.
if "$bin" stacks | grep -qE '^  flash-triton .*hopper 0\.163'; then pass=$((pass + 1)); else echo "FAIL stacks_lists_attention_kernels"; fail=$((fail + 1)); fi
if "$bin" stacks | grep -qE '^  fa1 .*ampere 0\.4,'; then pass=$((pass + 1)); else echo "FAIL stacks_lists_fa1"; fail=$((fail + 1)); fi
# Megatron-DeepSpeed's tensor-parallel all-reduces are not overlapped: the same TP4 run is slower than under Megatron with TE.
json_has train_megatron_deepspeed_exposes_tp "d['stack'] == 'megatron-deepspeed' and d['breakdown']['tp_comm_s'] > 0" -- train --model llama-3.1-8b --gpu a100-80gb-sxm --gpus 8 --tp 4 --stack megatron-deepspeed --json
json_has train_names_fa1 "d['attention_kernel'] == 'fa1'" -- train --model gpt2 --gpu a100-80gb-sxm --gpus 8 --stack deepspeed --attention-kernel fa1 --json
json_has train_names_attention_kernel "d['attention_kernel'] == 'flash-triton'" -- train --model llama-3.1-8b --gpu h100-sxm --gpus 8 --zero 3 --stack torchtitan --attention-kernel flash-triton --json
check loss_chunk_without_a_chunking_loss 2 "--loss-chunk-tokens: applies to --loss chunked or fused" -- train --model llama-3.1-8b --gpu h100-sxm --stack megatron --loss-chunk-tokens 1024
check fp8_without_recipe 2 "stack 'deepspeed' has no FP8 recipe" -- train --model llama-3.1-8b --gpu h100-sxm --precision fp8 --stack deepspeed
# The text names the FP8 recipe it priced, as the JSON does.
if "$bin" train --model llama-3.1-8b --gpu h100-sxm --gpus 8 --zero 3 --precision fp8 --fp8-recipe rowwise --stack torchtitan-compile | tr '\n' ' ' | grep -qE 'FP8 recipe rowwise'; then pass=$((pass + 1)); else echo "FAIL train_names_fp8_recipe"; fail=$((fail + 1)); fi
json_has fused_loss_saves_memory "d['loss'] == 'fused'" -- memory --model llama-3.1-8b --task lora --loss fused --json
json_has fabrics_json "set(['ib-ndr','ib-hdr','roce-400','eth-400','eth-200','eth-100']) <= set(f['id'] for f in d) and all(f['source'] for f in d)" -- fabrics --json
json_has train_cp "d['cp'] == 2 and d['gpus'] == 16" -- train --model llama-3.1-8b --gpu h100-sxm --gpus 16 --cp 2 --seq 32768 --stack torchtitan --json
# The fit is deterministic and the shipped data/fitted.toml is its output.
if "$bin" fit | diff -q - "$root/data/fitted.toml" >/dev/null; then pass=$((pass + 1)); else echo "FAIL fit_reproduces_fitted_toml"; fail=$((fail + 1)); fi

# Architectures (issue 10): MoE counts in every JSON, refusals exit 2 naming the keys, --assume-dense said everywhere.
cfg="$root/tests/fixtures/configs"
json_has memory_moe_params "d['parameters'] > 3e10 and 3.2e9 < d['active_parameters'] < 3.5e9 and d['model']['experts'] == 128" -- memory --model "$cfg/qwen3-30b-a3b.json" --json
json_has models_active "all('active_parameters' in m for m in d) and any(m['id'] == 'deepseek-v3' and m['latent_attention'] for m in d)" -- models --json
json_has train_moe_params "d['ep'] == 8 and d['active_parameters'] < d['parameters'] and d['breakdown']['ep_comm_s'] > 0" -- train --model qwen3-30b-a3b --gpu h100-sxm --gpus 8 --ep 8 --zero 1 --json
json_has infer_kv_replication "d['kv_cache_replication'] == 2" -- infer --model qwen3-235b-a22b --gpu h200-sxm --tp 8 --gpus 8 --weight-precision fp8 --json
json_has infer_attention_dp "d['attention_dp'] is True and d['ep'] == 8 and d['kv_cache_replication'] == 1" -- infer --model qwen3-235b-a22b --gpu h200-sxm --tp 8 --gpus 8 --weight-precision fp8 --engine tensorrt-llm --attention-dp --json
check attention_dp_engine 2 "--attention-dp: llama.cpp .* records no attention data parallelism" -- infer --model qwen3-30b-a3b --gpu rtx-4090 --tp 2 --gpus 2 --weight-precision q4_k_m --engine llama.cpp --attention-dp
check attention_dp_dense 2 "--attention-dp: is modelled for mixture-of-experts models" -- infer --model llama-3.1-70b --gpu h200-sxm --tp 8 --gpus 8 --engine sglang --attention-dp
json_has memory_attention_dp "d['attention_dp'] is True and d['engine_kv_cache']['tokens'] > 3000000" -- memory --model qwen3-235b-a22b --task infer --gpu h200-sxm --gpus 8 --tp 8 --precision fp8 --engine sglang --attention-dp --json
check memory_attention_dp_training 2 "--attention-dp: is a serving layout" -- memory --model gpt2 --attention-dp
check attention_dp_tp1 2 "--attention-dp: needs --tp 2" -- infer --model qwen3-30b-a3b --gpu h200-sxm --engine sglang --attention-dp
json_has plan_attention_dp_off "d['attention_dp_choice'] == 'off' and all(not o['attention_dp'] for o in d['options'])" -- plan --task infer --model qwen3-235b-a22b --gpu h200-sxm --engine tensorrt-llm --precision fp8 --rps 20 --attention-dp off --json
json_has plan_attention_dp_on "all(o['attention_dp'] == (o['tp'] >= 2) for o in d['options']) and d['best']['attention_dp'] is True" -- plan --task infer --model qwen3-235b-a22b --gpu h200-sxm --engine tensorrt-llm --precision fp8 --rps 20 --attention-dp on --json
check plan_attention_dp_dense 2 "--attention-dp: is modelled for mixture-of-experts models" -- plan --task infer --model llama-3.1-8b --gpu h100-sxm --rps 5 --attention-dp on
check plan_attention_dp_word 2 "--attention-dp: must be auto, on or off" -- plan --task infer --model qwen3-235b-a22b --gpu h200-sxm --rps 5 --attention-dp yes
check plan_attention_dp_training 2 "--attention-dp: .*--task infer" -- plan --model llama-3.1-8b --gpu h100-sxm --attention-dp on
json_has infer_moe_params "d['ep'] == 8 and d['active_parameters'] < d['parameters']" -- infer --model deepseek-v3 --gpu h200-sxm --tp 8 --gpus 8 --ep 8 --weight-precision fp8 --json
json_has plan_moe_ep "d['best'] is not None and 'ep' in d['best'] and d['active_parameters'] < d['parameters']" -- plan --model qwen3-30b-a3b --gpu h100-sxm --gpus 16 --json
check unknown_architecture 2 "model_type: unknown architecture 'minimax_m1'.*attn_type_list.*--assume-dense" -- memory --model "$cfg/minimax-m1.json"
check hybrid_refused 2 "linear_conv_kernel_dim" -- infer --model "$cfg/qwen3-next-80b-a3b.json" --gpu h100-sxm
check unknown_keys_refused 2 "num_routed_experts, num_shared_experts: not understood" -- train --model "$cfg/deepseek-v3-renamed-keys.json" --gpu h100-sxm
json_has assume_dense_json "d['assumed_dense'] and any('--assume-dense' in n for n in d['notes'])" -- memory --model "$cfg/minimax-m1.json" --assume-dense --json
"$bin" infer --model "$cfg/minimax-m1.json" --assume-dense --gpu h200-sxm >"$tmp/ad.txt" 2>&1
if grep -q "note: --assume-dense" "$tmp/ad.txt"; then pass=$((pass + 1)); else echo "FAIL assume_dense_text"; cat "$tmp/ad.txt"; fail=$((fail + 1)); fi
check ep_not_dividing 2 "--ep: 3 must divide" -- memory --model mixtral-8x7b --gpus 4 --ep 3
check ep_on_dense 2 "--ep: expert parallelism needs a mixture-of-experts model" -- memory --model llama-3.1-8b --gpus 2 --ep 2
check fp4_training_refused 2 "--precision: nvfp4 is a weight format" -- train --model llama-3.1-8b --gpu b200 --precision nvfp4
json_has gguf_name_precision "d['workload']['precision'] == 'q4_k_m'" -- memory --model qwen3-30b-a3b --task infer --precision Q4_K_M --json
json_has node_network_catalog "[g['node_network_gbps'] for g in d if g['id'] in ('a100-80gb-sxm', 'b300')] == [200, 800] or sorted(g['node_network_gbps'] for g in d if g['id'] in ('a100-80gb-sxm', 'b300')) == [200, 800]" -- gpus --json --tier datacenter
json_has train_names_node_network "d['network_gbps_per_gpu'] == 200 and 'a100-80gb-sxm ships in' in d['network_origin'] and d['links']['dp'] == 'network'" -- train --model llama-2-7b --gpu a100-80gb-sxm --gpus 64 --zero 3 --json
json_has plan_names_node_network "d['network_gbps_per_gpu'] == 200 and 'ships in' in d['network_origin'] and d['gpus_per_node'] == 8" -- plan --model llama-3.1-70b --gpu a100-80gb-sxm --gpus 64 --json
json_has plan_fabric_named "d['network_origin'] == '--fabric ib-ndr'" -- plan --model llama-3.1-70b --gpu h100-sxm --gpus 64 --fabric ib-ndr --json
json_has train_network_flag_wins "d['network_gbps_per_gpu'] == 100 and d['network_origin'] == '--network-gbps'" -- train --model llama-2-7b --gpu a100-80gb-sxm --gpus 64 --zero 3 --network-gbps 100 --json
json_has nvl72_domain "any(g['id'] == 'gb200' and g['nvlink_domain_gpus'] == 72 for g in d)" -- gpus --json --min-memory 180 --tier datacenter

# Serving engines, load simulation and autoscaling (issue 11).
json_has engines_json "set(['vllm','sglang','tensorrt-llm','llama.cpp','transformers']) <= {e['id'] for e in d} and all(e['name'] and e['source'] for e in d)" -- engines --json
json_has engines_scalar_f16 "[e['scalar_f16_matvec_hbm_slowdown'] for e in d if e['id'] == 'llama.cpp'] == [1.33] and all(e['scalar_f16_matvec_hbm_slowdown'] == 1 for e in d if e['id'] != 'llama.cpp')" -- engines --json
json_has engines_eager_scores "[e['eager_attention_bytes_per_score'] for e in d if e['id'] == 'llama.cpp'] == [20]" -- engines --json
json_has engines_dequantize_rows "[e['dequantize_min_rows'] for e in d if e['id'] == 'transformers'] == [2] and all(e['dequantize_min_rows'] == 0 for e in d if e['id'] != 'transformers')" -- engines --json
json_has infer_decode_dequantize "d['decode_dequantize_s'] > 0" -- infer --model llama-2-13b --gpu a100-80gb-sxm --engine transformers --precision nf4 --prompt 512 --output 512 --concurrency 16 --json
json_has engines_sglang_scheduler "[(e['prefill_first'], e['seqs_per_context_of_kv'], e['max_num_seqs_floor'], e['max_num_seqs']) for e in d if e['id'] == 'sglang'] == [(True, 512, 2048, 4096)] and not any(e['prefill_first'] for e in d if e['id'] != 'sglang')" -- engines --json
json_has engines_frontend "[e['frontend_seq_step_s'] for e in d if e['id'] == 'vllm'] == [6.69e-05] and all(e['frontend_seq_step_s'] == 0 and e['frontend_request_s'] == 0 for e in d if e['id'] != 'vllm')" -- engines --json
json_has infer_frontend_named "d['frontend_seq_step_s'] == 6.69e-05 and d['frontend_request_s'] > 0 and d['load']['frontend_busy_share'] < 0.5" -- infer --model llama-3.1-8b --gpu h100-sxm --engine vllm --rps 5 --requests 50 --json
json_has infer_frontend_busy "d['load']['frontend_busy_share'] > 0.9" -- infer --model gpt2-medium --gpu h100-sxm --engine vllm --rps 400 --requests 1000 --prompt 128 --output 128 --json
json_has engines_mla_decode "[e['mla_decode_overhead_s'] for e in d if e['id'] == 'vllm'] == [1.844e-05] and all(e['mla_decode_overhead_s'] == 0 for e in d if e['id'] != 'vllm')" -- engines --json
json_has engines_moe_call "[e['moe_call_overhead_s'] for e in d if e['id'] in ('vllm', 'sglang')] == [2.285e-05, 2.216e-05] and all(e['moe_call_overhead_s'] == 0 for e in d if e['id'] not in ('vllm', 'sglang'))" -- engines --json
json_has infer_prefill_forwards "d['prefill_forwards'] == 8 and d['prefill_chunk_tokens'] == 512" -- infer --model llama-3.1-8b --gpu rtx-4090 --weight-precision f16 --engine llama.cpp --prompt 4096 --output 16 --json
json_has engines_matvec_bound "[e['quantized_matvec_latency_bound'] and e['quantized_matvec_gbps_per_sm_fitted'] > 0 for e in d if e['id'] == 'llama.cpp'] == [True] and all(e['quantized_matvec_gbps_per_sm_fitted'] is None for e in d if e['id'] != 'llama.cpp')" -- engines --json
json_has engines_prefill_fitted "[e['prefill_matmul_fitted'] and 0 < e['prefill_matmul_scale_fitted'] < 1 for e in d if e['id'] == 'llama.cpp'] == [True] and all(e['prefill_matmul_scale_fitted'] is None for e in d if e['id'] != 'llama.cpp')" -- engines --json
json_has infer_prefill_scale "d['engine_prefill_matmul_scale'] < 1" -- infer --model llama-3.1-8b --gpu rtx-4090 --engine llama.cpp --weight-precision q4_k_m --json
json_has infer_matvec_bound_hbm "d['quantized_matvec_bytes_per_s'] > 0 and d['quantized_matvec_bytes_per_s'] < 2.039e12" -- infer --model llama-3.1-8b --gpu a100-80gb-sxm --engine llama.cpp --weight-precision q4_k_m --json
json_has infer_matvec_free_gddr "d['quantized_matvec_bytes_per_s'] is None" -- infer --model llama-3.1-8b --gpu rtx-4090 --engine llama.cpp --weight-precision q4_k_m --json
json_has infer_matvec_free_f16 "d['quantized_matvec_bytes_per_s'] is None" -- infer --model llama-3.1-8b --gpu a100-80gb-sxm --engine llama.cpp --weight-precision f16 --json
json_has infer_prefill_whole "d['prefill_forwards'] == 1 and d['prefill_chunk_tokens'] == 8192" -- infer --model llama-3.1-8b --gpu h100-sxm --prompt 4096 --output 16 --json
check engine_unknown 2 "--engine: unknown engine 'vlm'.*vllm" -- infer --model llama-3.1-8b --gpu h100-sxm --engine vlm
check engine_unknown_memory 2 "--engine: unknown engine" -- memory --model llama-3.1-8b --task infer --gpu h100-sxm --engine trt
check engine_on_training 2 "--engine: names a serving engine" -- memory --model llama-3.1-8b --task full --engine vllm
json_has infer_names_engine "d['engine'] == 'sglang' and 'latency' not in d" -- infer --model llama-3.1-8b --gpu h100-sxm --engine sglang --json
json_has infer_rps_latency "all(k in d['latency'][m] for m in ('ttft_s','tpot_s','e2e_s') for k in ('p50','p90','p99')) and d['throughput_tokens_per_s'] > 0 and d['goodput_rps'] > 0 and 'ttft_s' in d and 'tpot_s' in d" -- infer --model llama-3.1-8b --gpu h100-sxm --rps 10 --requests 300 --json
"$bin" infer --model llama-3.1-8b --gpu h100-sxm --rps 10 --requests 300 --seed 3 --json >"$tmp/r1.json" 2>/dev/null
"$bin" infer --model llama-3.1-8b --gpu h100-sxm --rps 10 --requests 300 --seed 3 --json >"$tmp/r2.json" 2>/dev/null
if cmp -s "$tmp/r1.json" "$tmp/r2.json"; then pass=$((pass + 1)); else echo "FAIL rps_seeded_deterministic"; fail=$((fail + 1)); fi
json_has infer_users "d['load']['requests'] == 100 and d['latency']['ttft_s']['p99'] >= d['latency']['ttft_s']['p50']" -- infer --model llama-3.1-8b --gpu h100-sxm --users 8 --think-time 1 --requests 100 --json
check rps_negative 2 "--rps: must be a rate" -- infer --model llama-3.1-8b --gpu h100-sxm --rps -1
check rps_and_users 2 "--users: give --users" -- infer --model llama-3.1-8b --gpu h100-sxm --rps 1 --users 2 --think-time 0
check users_need_think 2 "--think-time: is required" -- infer --model llama-3.1-8b --gpu h100-sxm --users 2
check scheduler_steps_zero 2 "--scheduler-steps: must be between 1 and 1024" -- infer --model llama-3.1-8b --gpu h100-sxm --rps 1 --scheduler-steps 0
check infer_client_bad 2 "--client: must be server or offline" -- infer --model llama-3.1-8b --gpu h100-sxm --rps 1 --client browser
json_has infer_client_offline "d['client'] == 'offline' and d['frontend_seq_step_s'] == 0 and d['frontend_request_s'] == 0" -- infer --model llama-3.1-8b --gpu h100-sxm --engine vllm --rps 5 --requests 50 --client offline --json
json_has scheduler_steps_delay "d['latency']['ttft_s']['p50'] > 0" -- infer --model llama-3.1-8b --gpu a100-80gb-sxm --rps 4 --requests 100 --scheduler-steps 10 --json
check acceptance_without_spec 2 "--acceptance-rate: needs --spec-tokens" -- infer --model llama-3.1-8b --gpu h100-sxm --rps 1 --acceptance-rate 0.5
printf 'prompt_tokens,output_tokens,arrival_s\n100,20,0\n200,30,0.5\n' >"$tmp/trace.csv"
json_has infer_trace "d['load']['requests'] == 2" -- infer --model llama-3.1-8b --gpu h100-sxm --trace "$tmp/trace.csv" --json
json_has trace_lengths_are_its_means "d['prompt_tokens'] == 150 and d['output_tokens'] == 25 and d['lengths_from'] == 'trace means'" -- infer --model llama-3.1-8b --gpu h100-sxm --trace "$tmp/trace.csv" --json
json_has moe_backend_assumption_named "d['unmodelled_moe_backends'] == ['cutlass']" -- infer --model gpt-oss-120b --precision mxfp4 --gpu h100-sxm --engine tensorrt-llm --json
json_has dense_model_names_no_moe_backend "d['unmodelled_moe_backends'] == []" -- infer --model llama-3.1-8b --gpu h100-sxm --engine tensorrt-llm --json
check trace_and_prompt 2 "--prompt: the trace gives each request's lengths" -- infer --model llama-3.1-8b --gpu h100-sxm --trace "$tmp/trace.csv" --prompt 64
printf 'prompt_tokens,output_tokens\n100,20\n-5,30\n' >"$tmp/bad.csv"
check trace_bad_line 2 "--trace: .*line 3" -- infer --model llama-3.1-8b --gpu h100-sxm --trace "$tmp/bad.csv"
check trace_missing 2 "--trace" -- infer --model llama-3.1-8b --gpu h100-sxm --trace "$tmp/nope.csv"
printf 'prompt_tokens,output_tokens\n9000000,20\n' >"$tmp/huge.csv"
check trace_exceeds_kv 2 "KV cache" -- infer --model llama-3.1-8b --gpu h100-sxm --trace "$tmp/huge.csv"
"$bin" advise "$root/examples/chat-service-8b.toml" --emit k8s >"$tmp/hpa.yaml" 2>/dev/null
if grep -q '^apiVersion: "autoscaling/v2"' "$tmp/hpa.yaml" && grep -q '^kind: "HorizontalPodAutoscaler"' "$tmp/hpa.yaml" && grep -q 'maxReplicas: ' "$tmp/hpa.yaml"; then
  pass=$((pass + 1)); else echo "FAIL advise_emit_k8s"; cat "$tmp/hpa.yaml"; fail=$((fail + 1)); fi
check emit_unknown 2 "--emit: must be k8s" -- advise "$root/examples/chat-service-8b.toml" --emit helm
check emit_without_service 2 "--emit: the workload has no" -- advise "$root/examples/qlora-7b-small-team.toml" --emit k8s
json_has plan_serving "d['task'] == 'infer' and d['engine'] == 'sglang' and d['best']['replicas_peak'] >= 1 and d['best']['replicas_min'] <= d['best']['replicas_peak'] and d['best']['ttft_s'] <= 1.0 and all(o['tp'] >= 1 for o in d['options'])" -- plan --task infer --model llama-3.1-8b --gpu h100-sxm --engine sglang --rps 30 --average-rps 10 --prompt 1000 --output 200 --json
check plan_engine_needs_infer 2 "--engine: sizes a serving deployment" -- plan --model llama-3.1-8b --gpu h100-sxm --engine vllm
check plan_serving_needs_rps 2 "--rps: plan --task infer needs the peak rate" -- plan --task infer --model llama-3.1-8b --gpu h100-sxm
check plan_serving_engine_unknown 2 "--engine" -- plan --task infer --model llama-3.1-8b --gpu h100-sxm --rps 5 --engine vllmm
check plan_serving_headroom 2 "--headroom: applies to training" -- plan --task infer --model llama-3.1-8b --gpu h100-sxm --rps 5 --headroom 0.2
for emit in "plan --task infer --model llama-3.1-8b --gpu l40s --rps 12 --average-rps 2 --emit k8s" \
            "infer --model llama-3.1-8b --gpu l40s --rps 12 --average-rps 2 --emit k8s"; do
  # shellcheck disable=SC2086
  "$bin" $emit >"$tmp/emit.yaml" 2>/dev/null
  if head -1 "$tmp/emit.yaml" | grep -qx -- '---' && grep -q '^kind: "HorizontalPodAutoscaler"' "$tmp/emit.yaml" &&
     grep -q 'name: "vllm_num_requests_running"' "$tmp/emit.yaml" && grep -q '^  minReplicas: 1' "$tmp/emit.yaml"; then
    pass=$((pass + 1)); else echo "FAIL emit_k8s: $emit"; cat "$tmp/emit.yaml"; fail=$((fail + 1)); fi
done
check infer_emit_needs_rps 2 "--emit: k8s needs the peak request rate" -- infer --model llama-3.1-8b --gpu l40s --emit k8s
check infer_average_needs_emit 2 "--average-rps: needs --emit k8s" -- infer --model llama-3.1-8b --gpu l40s --rps 2 --average-rps 1
check infer_average_above_peak 2 "--average-rps: must be above 0 and at most --rps" -- infer --model llama-3.1-8b --gpu l40s --rps 2 --average-rps 3 --emit k8s
json_has plan_no_nvlink "d['excluded_by_link'] > 0 and d['best']['tp'] == 1" -- plan --model gpt2 --gpu rtx-3090 --gpus 2 --stack megatron --seq 1024 --no-nvlink --json
json_has train_no_nvlink "d['links']['dp'] == 'PCIe'" -- train --model llama-2-7b --gpu rtx-3090 --gpus 2 --zero 3 --task qlora --no-nvlink --json
# A node that wires less NVLink than the part offers (a V100 board without NVSwitch): --nvlink-gbps.
json_has train_nvlink_gbps "d['nvlink_gbyte_s_per_gpu'] == 50" -- train --model llama-2-7b --gpu v100-32gb --gpus 4 --tp 4 --stack megatron --nvlink-gbps 50 --json
json_has infer_nvlink_gbps "d['nvlink_gbyte_s_per_gpu'] == 50 and d['gpus_per_node'] == 8" -- infer --model llama-3.1-70b --gpu v100-32gb --gpus 8 --tp 8 --nvlink-gbps 50 --json
check nvlink_gbps_negative 2 "--nvlink-gbps" -- train --model llama-2-7b --gpu v100-32gb --gpus 4 --tp 4 --nvlink-gbps -5
check nvlink_gbps_infinite 2 "--nvlink-gbps" -- train --model llama-2-7b --gpu v100-32gb --gpus 4 --tp 4 --nvlink-gbps inf
check nvlink_gbps_with_no_nvlink 2 "--nvlink-gbps: give --nvlink-gbps or --no-nvlink, not both" -- train --model llama-2-7b --gpu v100-32gb --gpus 4 --tp 4 --nvlink-gbps 50 --no-nvlink
check nvlink_gbps_without_nvlink 2 "--nvlink-gbps: l4 has no NVLink" -- train --model llama-2-7b --gpu l4 --gpus 4 --tp 4 --nvlink-gbps 50
json_has infer_chat_lengths "d['load']['requests'] == 200 and d['throughput_tokens_per_s'] > 0" -- infer --model llama-3.1-8b --gpu h100-sxm --rps 50 --requests 200 --prompt 216 --output 197 --lengths chat --json
check lengths_unknown 2 "--lengths: must be fixed or chat" -- infer --model llama-3.1-8b --gpu h100-sxm --rps 5 --lengths zipf
check lengths_chat_too_long 2 "--lengths: chat lengths are capped" -- infer --model llama-3.1-8b --gpu h100-sxm --rps 5 --prompt 4096 --lengths chat
check engine_without_kernels 2 "--engine: SGLang .* mxfp4 kernels for hopper" -- infer --model gpt-oss-20b --gpu a100-80gb-sxm --precision mxfp4 --engine sglang
check plan_engine_without_kernels 2 "--engine: SGLang .* not ampere" -- plan --task infer --model gpt-oss-20b --gpu a100-80gb-sxm --precision mxfp4 --engine sglang --rps 5
json_has plan_serving_chat "d['target']['lengths'] == 'chat' and d['best'] is not None" -- plan --task infer --model llama-3.1-8b --gpu h100-sxm --rps 20 --prompt 400 --output 200 --lengths chat --json
check plan_lengths_needs_infer 2 "--lengths: sizes a serving deployment" -- plan --model llama-3.1-8b --gpu h100-sxm --lengths chat
check plan_lengths_too_long 2 "--lengths: chat lengths are capped" -- plan --task infer --model llama-3.1-8b --gpu h100-sxm --rps 5 --prompt 2000 --lengths chat
check plan_serving_training_flag 2 "--stack: applies to training plans" -- plan --task infer --model llama-3.1-8b --gpu h100-sxm --rps 5 --stack megatron
check infer_training_flag 2 "--zero: applies to training" -- infer --model llama-3.1-8b --gpu h100-sxm --zero 3
# A model loaded in 16 bits keeps no fp32 master copy and 16-bit AdamW states: Llama 3.1 8B full fine-tune drops 8 B a parameter.
json_has memory_no_master_weights "d['memory_per_gpu_bytes'] < 145e9 - 60e9" -- memory --model llama-3.1-8b --task full --no-master-weights --json
json_has validate_serving "d['mape']['serving'] > 0 and d['serving_unexpressible'] > 0 and 'vllm' in d['serving_mape_by_engine']" -- validate --json

echo "$pass passed, $fail failed"
[ "$fail" -eq 0 ]
