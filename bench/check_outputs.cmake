# ctest bench_outputs: a benchmark creates the folder of a results path that does not exist yet,
# and refuses a path it cannot write (under a regular file: refused even to root) before it
# measures anything, with exit status 2 and a message.
#   cmake -DBENCH=<program> -DDIR=<scratch folder> -P check_outputs.cmake
file(REMOVE_RECURSE "${DIR}")
execute_process(COMMAND "${BENCH}" --quick --json "${DIR}/new/sub/out.json" RESULT_VARIABLE rc OUTPUT_QUIET ERROR_QUIET)
if(NOT rc EQUAL 0 OR NOT EXISTS "${DIR}/new/sub/out.json")
  message(FATAL_ERROR "${BENCH} did not write ${DIR}/new/sub/out.json (exit status ${rc})")
endif()
file(WRITE "${DIR}/file" "not a folder")
string(TIMESTAMP start "%s")
execute_process(COMMAND "${BENCH}" --quick --json "${DIR}/file/out.json" RESULT_VARIABLE rc OUTPUT_QUIET
                ERROR_VARIABLE err)
if(NOT rc EQUAL 2 OR NOT err MATCHES "cannot write results to")
  message(FATAL_ERROR "${BENCH} accepted ${DIR}/file/out.json (exit status ${rc}): ${err}")
endif()
file(REMOVE_RECURSE "${DIR}")
