// The batch reference job of e-h (FLIP-383 job recovery), submitted to a standalone
// ZooKeeper-HA session cluster: src (NumberSequenceSource of 3000 records in 12 splits handed out
// on request, p=3, paced per subtask by a chained map) -> forward -> map (p=3, ~1 ms/record,
// chaining disabled) -> keyBy -> agg (keyed sum by reduce, ~1 ms/record, parallelism left to
// the adaptive batch scheduler) -> rebalance -> sink (p=1, appends output.jsonl).
// Usage: BatchJob <jobName> <restPort> <jarFile> <outputFile> <srcMicrosPerSubtask,comma-separated>
// Prints "JOB_ID <id>" once submitted and exits; the run script watches the job over REST.

import org.apache.flink.api.common.RuntimeExecutionMode;
import org.apache.flink.api.common.eventtime.WatermarkStrategy;
import org.apache.flink.api.common.functions.ReduceFunction;
import org.apache.flink.api.common.typeinfo.Types;
import org.apache.flink.api.java.tuple.Tuple2;
import org.apache.flink.configuration.Configuration;
import org.apache.flink.core.execution.JobClient;
import org.apache.flink.streaming.api.environment.StreamExecutionEnvironment;

import java.util.Arrays;

public class BatchJob {
    public static final class PacedSum implements ReduceFunction<Tuple2<Long, Long>> {
        private final long micros;

        public PacedSum(long micros) {
            this.micros = micros;
        }

        @Override
        public Tuple2<Long, Long> reduce(Tuple2<Long, Long> a, Tuple2<Long, Long> b) throws Exception {
            Common.sleepMicros(micros);
            return Tuple2.of(a.f0, a.f1 + b.f1);
        }
    }

    public static void main(String[] args) throws Exception {
        String jobName = args[0];
        int restPort = Integer.parseInt(args[1]);
        String jar = args[2];
        String output = args[3];
        long[] srcMicros = Arrays.stream(args[4].split(",")).mapToLong(Long::parseLong).toArray();
        long records = 3000, mapMicros = 1000, aggMicros = 1000;
        int splits = 12;

        Configuration conf = new Configuration();
        conf.setString("execution.runtime-mode", "BATCH");
        StreamExecutionEnvironment env = StreamExecutionEnvironment.createRemoteEnvironment("localhost", restPort, conf, jar);
        env.setRuntimeMode(RuntimeExecutionMode.BATCH);
        env.fromSource(new Common.SplitSequenceSource(0, records - 1, splits), WatermarkStrategy.noWatermarks(), "src")
                .uid("src-source").setParallelism(3)
                .map(new Common.Pace(0, srcMicros)).returns(Common.KV)
                .name("src").uid("src").setParallelism(3)
                .forward()
                .map(new Common.SlowOrFailingMap(mapMicros, -1, -1)).returns(Common.KV)
                .name("map").uid("map").setParallelism(3).disableChaining()
                .keyBy(r -> r.f0, Types.LONG)
                .reduce(new PacedSum(aggMicros))
                .name("agg").uid("agg")
                .rebalance()
                .sinkTo(new Common.JsonLinesSink(output))
                .name("sink").uid("sink").setParallelism(1);
        JobClient client = env.executeAsync(jobName);
        System.out.println("JOB_ID " + client.getJobID());
        System.out.flush();
        System.exit(0);
    }
}
