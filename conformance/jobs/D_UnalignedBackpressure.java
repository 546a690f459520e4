// d-unaligned-backpressure: sources `short` (100 records) and `long` (600 records), p=1, 1/ms,
// rebalance into `slow` (map, p=1, 2 ms per record: back-pressure), then the 2PC sink `sink`
// (p=1). Unaligned exactly-once checkpoints every 30 ms.

import org.apache.flink.api.java.tuple.Tuple2;
import org.apache.flink.configuration.Configuration;
import org.apache.flink.streaming.api.CheckpointingMode;
import org.apache.flink.streaming.api.datastream.DataStream;
import org.apache.flink.streaming.api.environment.StreamExecutionEnvironment;

import java.nio.file.Path;
import java.util.Map;

public class D_UnalignedBackpressure {
    public static void main(String[] args) throws Exception {
        Path dir = Common.runDir(args);
        long shortN = 100, longN = 600, intervalUs = 1000, slowUs = 2000, cpMs = 30;
        Configuration conf = Common.streamingConf();
        StreamExecutionEnvironment env = StreamExecutionEnvironment.getExecutionEnvironment(conf);
        env.enableCheckpointing(cpMs, CheckpointingMode.EXACTLY_ONCE);
        env.getCheckpointConfig().enableUnalignedCheckpoints();
        DataStream<Tuple2<Long, Long>> s = Common.pacedSource(env, "short", shortN, 1, intervalUs);
        DataStream<Tuple2<Long, Long>> l = Common.pacedSource(env, "long", longN, 1, intervalUs);
        s.union(l).rebalance()
                .map(new Common.SlowOrFailingMap(slowUs, -1, -1)).returns(Common.KV)
                .name("slow").uid("slow").setParallelism(1)
                .rebalance()
                .sinkTo(new Common.TwoPhaseCommitSink("sink", dir.resolve("commits.jsonl").toString()))
                .name("sink").uid("sink").setParallelism(1);
        Map<String, Object> params = Common.map(
                "sources", Common.map("short", Common.map("records", shortN, "parallelism", 1, "record_interval_us", intervalUs),
                        "long", Common.map("records", longN, "parallelism", 1, "record_interval_us", intervalUs)),
                "slow", Common.map("parallelism", 1, "process_time_us", slowUs),
                "sink", Common.map("parallelism", 1, "delivery", "two_phase_commit"),
                "key", "seq % 16", "value", "seq % 100 + 1",
                "checkpointing", Common.map("interval_ms", cpMs, "mode", "EXACTLY_ONCE", "unaligned", true),
                "restart", Common.map("type", "fixed-delay", "attempts", 3, "delay_ms", 100, "failover", "region"),
                "cluster", Common.map("task_managers", 1, "slots", 8),
                "fault", null);
        Common.runOnMiniCluster(env, conf, "d-unaligned-backpressure", dir, params);
    }
}
