-- wrk script: POSTs one fixed JSON body with bearer tokens (round robin when several are
-- given) and prints a JSON summary line.
-- Usage: wrk ... -s bench/post.lua <url> -- <body-file> <token> [<token> ...]
local reqs = {}
local i = 0

function init(args)
  local f = assert(io.open(args[1], "rb"))
  local body = f:read("*a")
  f:close()
  for t = 2, math.max(2, #args) do
    -- Headers given with wrk's -H (a target's own, e.g. Portkey's provider) go on every request.
    local headers = {}
    for k, v in pairs(wrk.headers) do headers[k] = v end
    headers["Content-Type"] = "application/json"
    headers["Authorization"] = "Bearer " .. (args[t] or "x")
    reqs[#reqs + 1] = wrk.format("POST", nil, headers, body)
  end
end

function request()
  i = i % #reqs + 1
  return reqs[i]
end

function done(summary, latency, requests)
  local e = summary.errors
  io.write(string.format(
    'WRKJSON {"requests":%d,"duration_us":%d,"bytes":%d,"errors":{"connect":%d,"read":%d,"write":%d,"status":%d,"timeout":%d},' ..
    '"latency_us":{"p50":%d,"p90":%d,"p99":%d,"max":%d,"mean":%.1f}}\n',
    summary.requests, summary.duration, summary.bytes, e.connect, e.read, e.write, e.status, e.timeout,
    latency:percentile(50), latency:percentile(90), latency:percentile(99), latency.max, latency.mean))
end
