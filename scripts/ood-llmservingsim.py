#!/usr/bin/env python3
"""Builds the out-of-sample corpus of docs/accuracy.md ("Out of sample: three more LLMServingSim runs").

LLMServingSim (casys-kaist/LLMServingSim @ 5daddb2, MIT) holds three measured vLLM 0.19 runs besides the one the
shared corpus converts. This reuses the shared corpus's own converter (../shared/traces/measured/convert/
convert_llmservingsim.py) with its run table replaced by those three, so the layout, definitions and notes are the
corpus's.

usage: python3 scripts/ood-llmservingsim.py LLMSERVINGSIM_GIT_DIR OUT_DIR [SHARED_CONVERT_DIR]
       (LLMSERVINGSIM_GIT_DIR: e.g. the mirror `fetch github:casys-kaist/LLMServingSim` returns)
then:  ./servesim validate --corpus OUT_DIR --out out/ood --threads 2
"""
import os
import sys

here = os.path.dirname(os.path.abspath(__file__))
convert_dir = sys.argv[3] if len(sys.argv) > 3 else os.path.join(here, '..', '..', 'shared', 'traces', 'measured', 'convert')
sys.path.insert(0, convert_dir)
import convert_llmservingsim as c  # noqa: E402

EX = 'bench/examples'
c.RUNS = {
    'llmservingsim_RTX4090_Llama-3.1-8B_tp1': (c.HEAD, f'{EX}/RTX4090/Llama-3.1-8B/vllm',
        f'{EX}/RTX4090/Llama-3.1-8B/config.json', 'NVIDIA GeForce RTX 4090 (24 GB GDDR6X)'),
    'llmservingsim_RTXPRO6000_Qwen3-32B_tp2': (c.HEAD, f'{EX}/RTXPRO6000/Qwen3-32B/vllm',
        f'{EX}/RTXPRO6000/Qwen3-32B/config.json', 'NVIDIA RTX PRO 6000 (96 GB GDDR7, 1,597 GB/s per the source config.json)'),
    'llmservingsim_RTXPRO6000_Qwen3-30B-A3B_dp2ep': (c.HEAD, f'{EX}/RTXPRO6000/Qwen3-30B-A3B-Instruct-2507/vllm',
        f'{EX}/RTXPRO6000/Qwen3-30B-A3B-Instruct-2507/config.json',
        'NVIDIA RTX PRO 6000 (96 GB GDDR7, 1,597 GB/s per the source config.json)'),
}

if __name__ == '__main__':
    sys.argv = sys.argv[:3]
    c.main()
