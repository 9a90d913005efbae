#pragma once

#include <QByteArray>
#include <QList>

namespace cloop::tunnel {

// A byte queue that keeps the arrays it was given instead of one contiguous
// buffer, so bytes relayed through a channel (a DATA payload in, the same
// payload out) are shared, not copied at every step.
class ChunkQueue
{
public:
    qsizetype size() const { return m_bytes; }
    bool isEmpty() const { return m_bytes == 0; }

    void append(QByteArray bytes);

    // At most maxBytes from the front. A front chunk larger than maxBytes is
    // split; otherwise whole chunks are taken while they fit, so a relayed
    // chunk leaves as it came and only small ones are joined. May return
    // fewer than maxBytes while more is queued; never nothing when
    // something is queued and maxBytes > 0.
    QByteArray take(qsizetype maxBytes);

    void clear();

private:
    QList<QByteArray> m_chunks;
    qsizetype m_bytes = 0;
};

} // namespace cloop::tunnel
