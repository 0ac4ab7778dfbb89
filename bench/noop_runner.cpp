// A runner that honours the worker contract and does nothing: it answers
// its job with a canned, valid result at once. What remains of a job's time
// under it is torchsweep's own orchestration (bench_job_overhead).
//
//   bench_noop_runner --job job.json --out result.json
#include <string>

#include "shared/json_io.hpp"
#include "simulation/synthetic_result.hpp"

int main(int argc, char** argv) {
  std::string job_path, out_path;
  for (int i = 1; i + 1 < argc; i += 2) {
    const std::string flag = argv[i];
    if (flag == "--job") job_path = argv[i + 1];
    if (flag == "--out") out_path = argv[i + 1];
  }
  if (job_path.empty() || out_path.empty()) return 2;
  auto result = ts::simulation::make_result({});
  result["job"] = ts::json_io::read(job_path);
  ts::json_io::write_atomically(out_path, result);
  return 0;
}
