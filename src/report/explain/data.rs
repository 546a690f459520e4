//! Sentences about the data channels: records, barriers and EndOfPartition pushed, arriving
//! and taken (P1.3, P1.4, F1.14).

use super::*;

impl Narrator<'_> {
    pub(super) fn push(&self, channel: ChannelId, element: Element) -> Told {
        let from = self.graph.channels[channel.index()].from;
        let ch = self.channel(channel);
        match element {
            Element::Barrier(n) => told(
                self.name(from),
                "P1.4",
                format!("forwards barrier {n} on {ch}{WHY}: everything it sent before belongs to checkpoint {n}"),
            ),
            Element::PriorityBarrier(n) => told(
                self.name(from),
                "P1.4",
                format!("sends unaligned barrier {n} on {ch}: it overtakes the buffers queued ahead of it"),
            ),
            Element::CancelMarker(n) => told(
                self.name(from),
                "F1.10",
                format!("sends a cancellation marker for checkpoint {n} on {ch}: it abandoned the checkpoint, and its consumer is to abort it too"),
            ),
            Element::EndOfData(StopMode::NoDrain) => told(
                self.name(from),
                "F1.11 step 2",
                format!("sends EndOfData without drain on {ch}: it stopped for a savepoint; its consumer stops too, and finishes no operator"),
            ),
            Element::EndOfData(StopMode::Drain) => told(
                self.name(from),
                "F1.5 step 1",
                format!("sends EndOfData on {ch}{WHY}: no more records, but barriers and EndOfPartition may still follow"),
            ),
            Element::EndOfPartition => told(
                self.name(from),
                "P0",
                format!("sends EndOfPartition on {ch}{WHY}: its result partition ends, nothing follows"),
            ),
            Element::Record(_) => told(self.name(from), "", format!("sends a record on {ch}")),
        }
    }

    pub(super) fn arrive(&mut self, channel: ChannelId, element: Element) -> Told {
        let to = self.graph.channels[channel.index()].to;
        let ch = self.channel(channel);
        let text = match element {
            Element::EndOfPartition => {
                self.tasks[to.index()].eop_just_arrived = Some(channel);
                self.tasks[to.index()].eop_enqueued.insert(channel);
                return match self.protocol {
                    Some(FinishProtocol::Option1 | FinishProtocol::Option2) => told(
                        self.name(to),
                        "P1.3 step 1",
                        format!("EndOfPartition is enqueued on {ch}: the channel posts a priority notice to the barrier handler, so barriers can be inserted before it"),
                    ),
                    _ => told(self.name(to), "", format!("EndOfPartition arrived on {ch}")),
                };
            }
            other => format!("{} arrived on {ch}", element_name(other)),
        };
        self.tasks[to.index()].eop_just_arrived = None;
        told(self.name(to), "", text)
    }

    pub(super) fn take(
        &mut self,
        subtask: SubtaskId,
        channel: ChannelId,
        element: Element,
    ) -> Told {
        let ch = self.channel(channel);
        let name = self.name(subtask);
        self.tasks[subtask.index()].eop_just_arrived = None;
        match element {
            Element::Barrier(n) | Element::PriorityBarrier(n) => {
                self.tasks[subtask.index()].barrier_taken.insert(channel, n);
            }
            Element::EndOfPartition => {
                self.tasks[subtask.index()].eop_processed.insert(channel);
            }
            _ => {}
        }
        match element {
            Element::Barrier(n) => {
                self.tasks[subtask.index()].last_barrier_channel = Some(channel);
                told(
                    name,
                    "P1.4",
                    format!("processes barrier {n} from {ch}{WHY}; aligned mode blocks that channel until checkpoint {n} is aligned"),
                )
            }
            Element::PriorityBarrier(n) => {
                self.tasks[subtask.index()].last_barrier_channel = Some(channel);
                told(
                    name,
                    "P1.4",
                    format!("takes unaligned barrier {n} from {ch}: that channel's spilling to channel state ends"),
                )
            }
            Element::CancelMarker(n) => told(
                name,
                "F1.10",
                format!("takes a cancellation marker for checkpoint {n} from {ch}: if checkpoint {n} is still open here, the task aborts it, unblocks its channels, declines and passes the marker on"),
            ),
            Element::EndOfPartition => {
                let (rule, text) = match self.protocol {
                    Some(FinishProtocol::Option1 | FinishProtocol::Option2) => (
                        "P1.3 step 4",
                        format!("processed EndOfPartition from {ch}: the handler stops watching it, and every pending checkpoint needs one barrier fewer"),
                    ),
                    Some(FinishProtocol::Flink) => (
                        "F1.3",
                        format!("processed EndOfPartition from {ch}{WHY}: it is marked aligned for the pending checkpoint and excluded from later ones"),
                    ),
                    Some(FinishProtocol::Legacy) => match self.tasks[subtask.index()].aligning.take() {
                        Some(n) => (
                            "P1.2 legacy, F1.3",
                            format!("processed EndOfPartition from {ch} while aligning checkpoint {n}: before FLIP-147 that aborts the alignment, and the task declines (INPUT_END_OF_STREAM)"),
                        ),
                        None => ("P0", format!("processed EndOfPartition from {ch}: no more input on that channel")),
                    },
                    None => ("P0", format!("processed EndOfPartition from {ch}")),
                };
                told(name, rule, text)
            }
            Element::EndOfData(_) => told(
                name,
                "F1.5 step 1",
                format!("dequeued EndOfData from {ch}{WHY}: it acknowledges 'all records processed' to the producer"),
            ),
            Element::Record(_) => told(name, "", format!("took a record from {ch}")),
        }
    }
}
