package io.servesim.spark;

import io.servesim.sweep.PointResult;
import java.io.Serializable;

/** A sweep point's result as a Java bean (Spark's bean encoder writes it to Parquet). */
public final class ResultRow implements Serializable {
    private static final long serialVersionUID = 1L;

    private int pointId;
    private int deployment;
    private String settings;
    private String error;
    private int gpus;
    private long completed;
    private double ttftP90Ms;
    private double tpotP90Ms;
    private double e2eP99Ms;
    private double outputTokS;
    private double goodputRps;
    private double throughputPerGpu;
    private double goodputPerGpu;
    private boolean sloPass;
    private double objective;

    /** Converts a result. */
    static ResultRow of(PointResult r) {
        ResultRow x = new ResultRow();
        x.pointId = r.pointId();
        x.deployment = r.deployment();
        x.settings = String.join(" ", r.overrides());
        x.error = r.error();
        x.gpus = r.gpus();
        x.completed = r.completed();
        x.ttftP90Ms = r.ttftP90Ms();
        x.tpotP90Ms = r.tpotP90Ms();
        x.e2eP99Ms = r.e2eP99Ms();
        x.outputTokS = r.outputTokS();
        x.goodputRps = r.goodputRps();
        x.throughputPerGpu = r.throughputPerGpu();
        x.goodputPerGpu = r.goodputPerGpu();
        x.sloPass = r.sloPass();
        x.objective = r.objective();
        return x;
    }

    /** Point id. */
    public int getPointId() {
        return pointId;
    }

    /** Sets the point id. */
    public void setPointId(int v) {
        pointId = v;
    }

    /** Deployment index. */
    public int getDeployment() {
        return deployment;
    }

    /** Sets the deployment index. */
    public void setDeployment(int v) {
        deployment = v;
    }

    /** The point's settings. */
    public String getSettings() {
        return settings;
    }

    /** Sets the settings. */
    public void setSettings(String v) {
        settings = v;
    }

    /** Error, or null. */
    public String getError() {
        return error;
    }

    /** Sets the error. */
    public void setError(String v) {
        error = v;
    }

    /** GPUs. */
    public int getGpus() {
        return gpus;
    }

    /** Sets GPUs. */
    public void setGpus(int v) {
        gpus = v;
    }

    /** Completed requests. */
    public long getCompleted() {
        return completed;
    }

    /** Sets completed requests. */
    public void setCompleted(long v) {
        completed = v;
    }

    /** TTFT p90. */
    public double getTtftP90Ms() {
        return ttftP90Ms;
    }

    /** Sets TTFT p90. */
    public void setTtftP90Ms(double v) {
        ttftP90Ms = v;
    }

    /** TPOT p90. */
    public double getTpotP90Ms() {
        return tpotP90Ms;
    }

    /** Sets TPOT p90. */
    public void setTpotP90Ms(double v) {
        tpotP90Ms = v;
    }

    /** E2E p99. */
    public double getE2eP99Ms() {
        return e2eP99Ms;
    }

    /** Sets E2E p99. */
    public void setE2eP99Ms(double v) {
        e2eP99Ms = v;
    }

    /** Output tokens per second. */
    public double getOutputTokS() {
        return outputTokS;
    }

    /** Sets output tokens per second. */
    public void setOutputTokS(double v) {
        outputTokS = v;
    }

    /** Goodput, requests per second. */
    public double getGoodputRps() {
        return goodputRps;
    }

    /** Sets goodput. */
    public void setGoodputRps(double v) {
        goodputRps = v;
    }

    /** Throughput per GPU. */
    public double getThroughputPerGpu() {
        return throughputPerGpu;
    }

    /** Sets throughput per GPU. */
    public void setThroughputPerGpu(double v) {
        throughputPerGpu = v;
    }

    /** Goodput per GPU. */
    public double getGoodputPerGpu() {
        return goodputPerGpu;
    }

    /** Sets goodput per GPU. */
    public void setGoodputPerGpu(double v) {
        goodputPerGpu = v;
    }

    /** Whether the SLO was met. */
    public boolean isSloPass() {
        return sloPass;
    }

    /** Sets the SLO verdict. */
    public void setSloPass(boolean v) {
        sloPass = v;
    }

    /** Objective value. */
    public double getObjective() {
        return objective;
    }

    /** Sets the objective value. */
    public void setObjective(double v) {
        objective = v;
    }
}
