// Prints the closing line CI reads: "N passed, N failed". A run with no test executed is a failure.
module.exports = class SummaryReporter {
  onRunComplete(_contexts, results) {
    const failed = results.numFailedTests + results.numRuntimeErrorTestSuites;
    process.stdout.write(`\n${results.numPassedTests} passed, ${failed} failed\n`);
    if (results.numTotalTests === 0) {
      process.stdout.write('no test was executed: treating the run as failed\n');
      process.exitCode = 1;
    }
  }
};
