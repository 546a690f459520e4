// a-two-sources-2pc: sources `short` (100 records) and `long` (1000 records), each p=1 and paced
// at 1 record/ms, keyBy into the keyed sum `sum` (p=2), rebalance into the two-phase-commit sink
// `sink` (p=1). Aligned exactly-once checkpoints every 30 ms. B_ reuses it with a failure.

import org.apache.flink.api.java.tuple.Tuple2;
import org.apache.flink.configuration.Configuration;
import org.apache.flink.streaming.api.CheckpointingMode;
import org.apache.flink.streaming.api.datastream.DataStream;
import org.apache.flink.streaming.api.environment.StreamExecutionEnvironment;

import java.nio.file.Path;
import java.util.Map;

public class A_TwoSources2pc {
    public static void main(String[] args) throws Exception {
        run(args, "a-two-sources-2pc", -1, -1);
    }

    static void run(String[] args, String job, int failSubtask, long failAt) throws Exception {
        Path dir = Common.runDir(args);
        long shortN = 100, longN = 1000, intervalUs = 1000, cpMs = 30;
        Configuration conf = Common.streamingConf();
        StreamExecutionEnvironment env = StreamExecutionEnvironment.getExecutionEnvironment(conf);
        env.enableCheckpointing(cpMs, CheckpointingMode.EXACTLY_ONCE);
        DataStream<Tuple2<Long, Long>> s = Common.pacedSource(env, "short", shortN, 1, intervalUs);
        DataStream<Tuple2<Long, Long>> l = Common.pacedSource(env, "long", longN, 1, intervalUs);
        DataStream<Tuple2<Long, Long>> sum = s.union(l)
                .keyBy(r -> r.f0, org.apache.flink.api.common.typeinfo.Types.LONG)
                .transform("sum", Common.KV, new Common.KeyedSum(failSubtask, failAt))
                .uid("sum").setParallelism(2);
        sum.rebalance()
                .sinkTo(new Common.TwoPhaseCommitSink("sink", dir.resolve("commits.jsonl").toString()))
                .name("sink").uid("sink").setParallelism(1);
        Map<String, Object> params = Common.map(
                "sources", Common.map("short", Common.map("records", shortN, "parallelism", 1, "record_interval_us", intervalUs),
                        "long", Common.map("records", longN, "parallelism", 1, "record_interval_us", intervalUs)),
                "sum", Common.map("parallelism", 2, "keys", 16),
                "sink", Common.map("parallelism", 1, "delivery", "two_phase_commit"),
                "key", "seq % 16", "value", "seq % 100 + 1",
                "checkpointing", Common.map("interval_ms", cpMs, "mode", "EXACTLY_ONCE", "unaligned", false),
                "restart", Common.map("type", "fixed-delay", "attempts", 3, "delay_ms", 100, "failover", "region"),
                "cluster", Common.map("task_managers", 1, "slots", 8),
                "fault", failAt > 0 ? Common.map("fail_task", "sum[" + failSubtask + "]", "attempt", 0, "at_input_record", failAt) : null);
        Common.runOnMiniCluster(env, conf, job, dir, params);
    }
}
