--------------------------------------------------------------------------
-- Roofline: bytes and FLOPs per operation and pass, device peaks
--------------------------------------------------------------------------

-- Known devices and their datasheet peaks (dense, no sparsity; boost clocks).
-- An environment matches the row with its product and form factor, else the
-- product's row without a form factor.  Add rows for other devices; rows
-- you add (seeded = false) are kept by pg_dump.
CREATE TABLE kbench_devices (
	name text PRIMARY KEY,
	vendor text NOT NULL,
	product text NOT NULL,                -- as kbench_environments.product
	form_factor text,                     -- as kbench_environments.form_factor; NULL: any
	architecture text,
	memory_bytes bigint,
	peak_bandwidth_bytes_per_s float8 NOT NULL CHECK (peak_bandwidth_bytes_per_s > 0),
	peak_flops_fp32 float8 CHECK (peak_flops_fp32 > 0),    -- vector (CUDA core / SIMD) fp32
	peak_flops_tf32 float8 CHECK (peak_flops_tf32 > 0),    -- matrix (tensor core)
	peak_flops_bf16 float8 CHECK (peak_flops_bf16 > 0),    -- matrix, fp32 accumulate
	peak_flops_fp16 float8 CHECK (peak_flops_fp16 > 0),    -- matrix, fp32 accumulate
	peak_flops_fp8 float8 CHECK (peak_flops_fp8 > 0),      -- matrix
	source text,
	seeded boolean NOT NULL DEFAULT false,
	UNIQUE NULLS NOT DISTINCT (product, form_factor)
);
COMMENT ON TABLE kbench_devices IS 'device peaks for the roofline: memory bandwidth and FLOP rates by precision (datasheet, dense)';

INSERT INTO kbench_devices (name, vendor, product, form_factor, architecture, memory_bytes, peak_bandwidth_bytes_per_s,
                            peak_flops_fp32, peak_flops_tf32, peak_flops_bf16, peak_flops_fp16, peak_flops_fp8, source, seeded) VALUES
	('A100 SXM4 40GB', 'nvidia', 'NVIDIA A100', 'SXM4-40GB', 'sm_80', 40 * 2^30, 1555e9, 19.5e12, 156e12, 312e12, 312e12, NULL, 'NVIDIA A100 datasheet', true),
	('A100 SXM4 80GB', 'nvidia', 'NVIDIA A100', 'SXM4-80GB', 'sm_80', 80 * 2^30, 2039e9, 19.5e12, 156e12, 312e12, 312e12, NULL, 'NVIDIA A100 datasheet', true),
	('A100 PCIe 40GB', 'nvidia', 'NVIDIA A100', 'PCIE-40GB', 'sm_80', 40 * 2^30, 1555e9, 19.5e12, 156e12, 312e12, 312e12, NULL, 'NVIDIA A100 datasheet', true),
	('A100 PCIe 80GB', 'nvidia', 'NVIDIA A100', '80GB PCIe', 'sm_80', 80 * 2^30, 1935e9, 19.5e12, 156e12, 312e12, 312e12, NULL, 'NVIDIA A100 datasheet', true),
	('H100 SXM5 80GB', 'nvidia', 'NVIDIA H100', '80GB HBM3', 'sm_90', 80 * 2^30, 3350e9, 67e12, 494.7e12, 989.4e12, 989.4e12, 1978.9e12, 'NVIDIA H100 datasheet (SXM5)', true),
	('H100 PCIe 80GB', 'nvidia', 'NVIDIA H100', 'PCIe', 'sm_90', 80 * 2^30, 2000e9, 51.2e12, 378e12, 756e12, 756e12, 1513e12, 'NVIDIA H100 datasheet (PCIe)', true),
	('H100 NVL 94GB', 'nvidia', 'NVIDIA H100', 'NVL', 'sm_90', 94 * 2^30, 3900e9, 60e12, 417.5e12, 835e12, 835e12, 1670e12, 'NVIDIA H100 datasheet (NVL)', true),
	('H200 SXM 141GB', 'nvidia', 'NVIDIA H200', NULL, 'sm_90', 141 * 2^30, 4800e9, 67e12, 494.7e12, 989.4e12, 989.4e12, 1978.9e12, 'NVIDIA H200 datasheet (SXM)', true),
	('H200 NVL 141GB', 'nvidia', 'NVIDIA H200', 'NVL', 'sm_90', 141 * 2^30, 4800e9, 60e12, 417.5e12, 835e12, 835e12, 1670e12, 'NVIDIA H200 datasheet (NVL)', true),
	('B200 180GB', 'nvidia', 'NVIDIA B200', NULL, 'sm_100', 180 * 2^30, 8000e9, 75e12, 1125e12, 2250e12, 2250e12, 4500e12, 'NVIDIA HGX B200 datasheet, per GPU', true),
	('L4 24GB', 'nvidia', 'NVIDIA L4', NULL, 'sm_89', 24 * 2^30, 300e9, 30.3e12, 60e12, 121e12, 121e12, 242e12, 'NVIDIA L4 datasheet', true),
	('L40S 48GB', 'nvidia', 'NVIDIA L40S', NULL, 'sm_89', 48 * 2^30, 864e9, 91.6e12, 183e12, 362e12, 362e12, 733e12, 'NVIDIA L40S datasheet', true),
	('MI300X 192GB', 'amd', 'AMD Instinct MI300X', NULL, 'gfx942', 192 * 2^30, 5300e9, 163.4e12, 653.7e12, 1307.4e12, 1307.4e12, 2614.9e12, 'AMD Instinct MI300X datasheet', true),
	('GeForce RTX 3090', 'nvidia', 'NVIDIA GeForce RTX 3090', NULL, 'sm_86', 24 * 2^30, 936e9, 35.6e12, 35.6e12, 71e12, 71e12, NULL, 'NVIDIA Ampere GA102 whitepaper', true),
	('GeForce RTX 4090', 'nvidia', 'NVIDIA GeForce RTX 4090', NULL, 'sm_89', 24 * 2^30, 1008e9, 82.6e12, 82.6e12, 165.2e12, 165.2e12, 330.3e12, 'NVIDIA Ada Lovelace whitepaper', true);

-- Bytes moved and FLOPs done per call, by operation (its short name:
-- layer_norm for liger-layer-norm) and pass, as expressions over the
-- workload's axes.  compute says which peak bounds the FLOPs: vector (fp32
-- CUDA-core rate) or tensor (the matrix rate of the workload's dtype).
CREATE TABLE kbench_operation_costs (
	operation text NOT NULL,
	mode text NOT NULL CHECK (mode IN ('forward', 'backward', 'full')),
	bytes text NOT NULL CHECK (_kernelindex.cost_expression_ok(bytes)),
	flops text NOT NULL CHECK (_kernelindex.cost_expression_ok(flops)),
	compute text NOT NULL DEFAULT 'vector' CHECK (compute IN ('vector', 'tensor')),
	note text,
	seeded boolean NOT NULL DEFAULT false,
	PRIMARY KEY (operation, mode)
);
COMMENT ON TABLE kbench_operation_costs IS 'compulsory bytes and FLOPs per call of an operation''s pass, as expressions over the workload''s axes and dtype_bytes';

-- The formulas of kbench's own operations (layer_norm, megatron_cross_entropy,
-- jsd, distill_jsd_loss) are written once, in the kernels registry
-- (kernels/ops/<op>.c), which kbench evaluates for its runs; they come from
-- there, every pass included (distill_jsd_loss's registry has no backward:
-- Liger times it with the gradient computed in the forward pass; jsd's
-- backward is log_softmax's backward from that gradient, as Liger's script
-- times it).
-- (_kernelindex.registry_costs(): sql/prelude/00_schema_functions.sql)
INSERT INTO kbench_operation_costs (operation, mode, bytes, flops, compute, note, seeded)
	SELECT operation, mode, bytes, flops, compute, note, true
	  FROM jsonb_to_recordset(_kernelindex.registry_costs())
	       AS c(operation text, mode text, bytes text, flops text, compute text, note text);

-- The other operations Liger benchmarks (no kbench kernel).  R rows, H
-- hidden; dtype_bytes the bytes of the workload's float dtype.
INSERT INTO kbench_operation_costs (operation, mode, bytes, flops, compute, note, seeded) VALUES
	('rms_norm', 'forward', 'dtype_bytes * (2 * rows * hidden + hidden) + 4 * rows', '4 * rows * hidden', 'vector',
	 'read x, weight; write y and fp32 rstd per row', true),
	('rms_norm', 'backward', 'dtype_bytes * (3 * rows * hidden + 2 * hidden) + 4 * rows', '9 * rows * hidden', 'vector',
	 'read x, dy, weight, rstd; write dx, dweight', true),
	('rms_norm', 'full', 'dtype_bytes * (5 * rows * hidden + 3 * hidden) + 8 * rows', '13 * rows * hidden', 'vector',
	 'forward + backward', true),
	('softmax', 'forward', 'dtype_bytes * 2 * rows * hidden', '5 * rows * hidden', 'vector',
	 'read x, write y (max, subtract, exp, sum, divide)', true),
	('softmax', 'backward', 'dtype_bytes * 3 * rows * hidden', '4 * rows * hidden', 'vector',
	 'read y, dy; write dx', true),
	('softmax', 'full', 'dtype_bytes * 5 * rows * hidden', '9 * rows * hidden', 'vector', 'forward + backward', true),
	('cross_entropy', 'forward', 'dtype_bytes * tokens * vocab + 12 * tokens', '4 * tokens * vocab', 'vector',
	 'read logits, int64 targets; write fp32 losses (as megatron_cross_entropy)', true),
	('cross_entropy', 'backward', '2 * dtype_bytes * tokens * vocab + 16 * tokens', '9 * tokens * vocab', 'vector',
	 'read logits once, write the gradient (as megatron_cross_entropy)', true),
	('cross_entropy', 'full', '2 * dtype_bytes * tokens * vocab + 16 * tokens', '9 * tokens * vocab', 'vector',
	 'one fused pass: read logits once, write the gradient (as megatron_cross_entropy)', true),
	('kl_div', 'forward', '2 * dtype_bytes * tokens * vocab + 4 * tokens', '4 * tokens * vocab', 'vector',
	 'read input (log-probabilities) and target; write the loss', true),
	('kl_div', 'backward', '2 * dtype_bytes * tokens * vocab', 'tokens * vocab', 'vector',
	 'read target, write the gradient', true),
	('kl_div', 'full', '4 * dtype_bytes * tokens * vocab + 4 * tokens', '5 * tokens * vocab', 'vector', 'forward + backward', true),
	('swiglu', 'forward', 'dtype_bytes * (2 * batch * seq * hidden + 3 * hidden * intermediate)',
	 '6 * batch * seq * hidden * intermediate + 5 * batch * seq * intermediate', 'tensor',
	 'the LLaMA MLP: gate, up and down projections and silu(gate) * up; read x and the three weights, write y', true),
	('swiglu', 'backward', 'dtype_bytes * (3 * batch * seq * hidden + 6 * hidden * intermediate + 2 * batch * seq * intermediate)',
	 '12 * batch * seq * hidden * intermediate + 10 * batch * seq * intermediate', 'tensor',
	 'read dy, x, the saved gate and up projections and the weights; write dx and the three weight gradients', true),
	('swiglu', 'full', 'dtype_bytes * (5 * batch * seq * hidden + 9 * hidden * intermediate + 2 * batch * seq * intermediate)',
	 '18 * batch * seq * hidden * intermediate + 15 * batch * seq * intermediate', 'tensor', 'forward + backward', true),
	('geglu', 'forward', 'dtype_bytes * (2 * batch * seq * hidden + 3 * hidden * intermediate)',
	 '6 * batch * seq * hidden * intermediate + 10 * batch * seq * intermediate', 'tensor',
	 'the gated MLP with tanh-approximated gelu; read x and the three weights, write y', true),
	('geglu', 'backward', 'dtype_bytes * (3 * batch * seq * hidden + 6 * hidden * intermediate + 2 * batch * seq * intermediate)',
	 '12 * batch * seq * hidden * intermediate + 16 * batch * seq * intermediate', 'tensor',
	 'read dy, x, the saved gate and up projections and the weights; write dx and the three weight gradients', true),
	('geglu', 'full', 'dtype_bytes * (5 * batch * seq * hidden + 9 * hidden * intermediate + 2 * batch * seq * intermediate)',
	 '18 * batch * seq * hidden * intermediate + 26 * batch * seq * intermediate', 'tensor', 'forward + backward', true),
	('embedding', 'forward', 'dtype_bytes * (batch * seq * hidden + least(batch * seq, vocab) * hidden) + 8 * batch * seq', '0', 'vector',
	 'read int64 ids, read each distinct row at most once (at most vocab of them), write y', true),
	('embedding', 'backward', 'dtype_bytes * (2 * batch * seq * hidden + vocab * hidden) + 8 * batch * seq', 'batch * seq * hidden', 'vector',
	 'read dy and ids, write the (zeroed) weight gradient and accumulate the gathered rows', true),
	('embedding', 'full', 'dtype_bytes * (3 * batch * seq * hidden + least(batch * seq, vocab) * hidden + vocab * hidden) + 16 * batch * seq', 'batch * seq * hidden', 'vector',
	 'forward + backward', true);

SELECT pg_catalog.pg_extension_config_dump('kbench_devices', 'WHERE NOT seeded');
SELECT pg_catalog.pg_extension_config_dump('kbench_operation_costs', 'WHERE NOT seeded');

-- Measured ceilings (issue 27, item 5): what kbench's probe (kernels/probe.c,
-- `kbench probe`, kbench_probe(device)) measured an environment sustains,
-- one row per environment, beside the datasheet peaks of kbench_devices.
-- A plain table keyed by the environment's digest, not a manifest: a probe
-- is a measurement of the environment (as a run is), but the manifest kinds
-- have no member for it.  bandwidth: the better of the copy and the triad
-- (CPU: on every online CPU; GPU: the copy kernel); flops_fp32: the fp32 FMA
-- loop (vector); flops_tf32..fp8: a cuBLASLt GEMM per dtype (GPU only).
-- NULL: not measured.  probe: everything the probe reported (one-thread
-- figures, threads, array size, load average, note).
CREATE TABLE kbench_environment_probes (
	environment_digest text PRIMARY KEY CHECK (environment_digest ~ '^sha256:[0-9a-f]{64}$'),
	device text NOT NULL,                 -- as probed: cpu, cuda:N
	probed_at timestamptz NOT NULL DEFAULT now(),
	bandwidth_bytes_per_s float8 CHECK (bandwidth_bytes_per_s > 0),
	flops_fp32 float8 CHECK (flops_fp32 > 0),
	flops_tf32 float8 CHECK (flops_tf32 > 0),
	flops_bf16 float8 CHECK (flops_bf16 > 0),
	flops_fp16 float8 CHECK (flops_fp16 > 0),
	flops_fp8 float8 CHECK (flops_fp8 > 0),
	probe jsonb NOT NULL CHECK (jsonb_typeof(probe) = 'object')
);
COMMENT ON TABLE kbench_environment_probes IS 'measured ceilings per environment (kbench probe): sustained bandwidth and FLOP rates, NULL where not measured';
SELECT pg_catalog.pg_extension_config_dump('kbench_environment_probes', '');
