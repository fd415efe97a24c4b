-- wrk script of the OpenID Provider's token endpoint, refresh_token grant
-- (test/bench/httpbench/openid.go). Arguments: a file of refresh tokens,
-- one a line, each the newest of its family and never used; the number of
-- wrk threads. Each thread takes its share of the file into a pool. A
-- request takes a token out of the pool and refreshes it; the answer's new
-- refresh token (the rotation) goes back in. So every request is a
-- legitimate refresh: no token is sent twice (a reuse would revoke its
-- family, log a warning and fail the run). The pool holds at least as
-- many tokens as the thread has connections, and a connection sends its
-- next request only after its answer was read, so it never runs dry
-- unless answers fail; then it sends "exhausted", which is refused (400)
-- and fails the run.
local counter = 0

function setup(thread)
  thread:set("id", counter)
  counter = counter + 1
end

function init(args)
  local nthreads = tonumber(args[2])
  pool = {}
  local i = 0
  for line in io.lines(args[1]) do
    if line ~= "" then
      if i % nthreads == id then
        pool[#pool + 1] = line
      end
      i = i + 1
    end
  end
  wrk.method = "POST"
  wrk.headers["Content-Type"] = "application/x-www-form-urlencoded"
end

function request()
  local token = table.remove(pool) or "exhausted"
  return wrk.format(nil, nil, nil, "grant_type=refresh_token&refresh_token=" .. token)
end

function response(status, headers, body)
  local token = body:match('"refresh_token":"([^"]+)"')
  if token then
    pool[#pool + 1] = token
  end
end
