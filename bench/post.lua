-- wrk script: POSTs one fixed JSON body with a bearer token and prints a JSON summary line.
-- Usage: wrk ... -s bench/post.lua <url> -- <body-file> <token>
local req

function init(args)
  local f = assert(io.open(args[1], "rb"))
  local body = f:read("*a")
  f:close()
  local headers = { ["Content-Type"] = "application/json", ["Authorization"] = "Bearer " .. (args[2] or "x") }
  req = wrk.format("POST", nil, headers, body)
end

function request()
  return req
end

function done(summary, latency, requests)
  local e = summary.errors
  io.write(string.format(
    'WRKJSON {"requests":%d,"duration_us":%d,"bytes":%d,"errors":{"connect":%d,"read":%d,"write":%d,"status":%d,"timeout":%d},' ..
    '"latency_us":{"p50":%d,"p90":%d,"p99":%d,"max":%d,"mean":%.1f}}\n',
    summary.requests, summary.duration, summary.bytes, e.connect, e.read, e.write, e.status, e.timeout,
    latency:percentile(50), latency:percentile(90), latency:percentile(99), latency.max, latency.mean))
end
