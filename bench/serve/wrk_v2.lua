-- wrk script for the serving benchmark: POST one fixed V2 body, print the figures as one JSON line.
-- The body and its headers come from the environment:
--   BENCH_BODY           file holding the request body (JSON, or JSON + binary tensors)
--   BENCH_CONTENT_TYPE   its Content-Type
--   BENCH_HEADER_LENGTH  Inference-Header-Content-Length for binary bodies (unset or empty: none)

local file = assert(io.open(os.getenv("BENCH_BODY"), "rb"))
wrk.method = "POST"
wrk.body = file:read("*a")
file:close()
wrk.headers["Content-Type"] = os.getenv("BENCH_CONTENT_TYPE") or "application/json"
local header_length = os.getenv("BENCH_HEADER_LENGTH")
if header_length ~= nil and header_length ~= "" then
  wrk.headers["Inference-Header-Content-Length"] = header_length
end

function done(summary, latency, requests)
  local e = summary.errors
  io.write(string.format(
    'BENCH_RESULT {"requests":%d,"duration_us":%d,"bytes":%d,"connect":%d,"read":%d,"write":%d,"status":%d,' ..
    '"timeout":%d,"p50_us":%d,"p90_us":%d,"p99_us":%d,"max_us":%d,"mean_us":%.1f}\n',
    summary.requests, summary.duration, summary.bytes, e.connect, e.read, e.write, e.status, e.timeout,
    latency:percentile(50), latency:percentile(90), latency:percentile(99), latency.max, latency.mean))
end
