package org.appendlog.bench.jobs;

/** Whether a job's final result equals what the generator implies, and a line that says so. */
public final class Verification {

    public final boolean passed;
    public final String summary;

    private Verification(boolean passed, String summary) {
        this.passed = passed;
        this.summary = summary;
    }

    public static Verification passed(String summary) {
        return new Verification(true, summary);
    }

    public static Verification failed(String summary) {
        return new Verification(false, summary);
    }

    @Override
    public String toString() {
        return (passed ? "VERIFIED: " : "VERIFICATION FAILED: ") + summary;
    }
}
