#include "common/tunnel/chunkqueue.h"

namespace cloop::tunnel {

void ChunkQueue::append(QByteArray bytes)
{
    if (bytes.isEmpty())
        return;
    m_bytes += bytes.size();
    m_chunks.append(std::move(bytes));
}

QByteArray ChunkQueue::take(qsizetype maxBytes)
{
    if (maxBytes <= 0 || m_chunks.isEmpty())
        return {};
    QByteArray out;
    QByteArray &front = m_chunks.first();
    if (front.size() > maxBytes) {
        out = front.first(maxBytes);
        // Cheap in Qt 6: dropping a prefix moves the begin pointer.
        front.remove(0, maxBytes);
    } else {
        out = std::move(front);
        m_chunks.removeFirst();
        while (!m_chunks.isEmpty() && out.size() + m_chunks.first().size() <= maxBytes) {
            out.append(m_chunks.first());
            m_chunks.removeFirst();
        }
    }
    m_bytes -= out.size();
    return out;
}

void ChunkQueue::clear()
{
    m_chunks.clear();
    m_bytes = 0;
}

} // namespace cloop::tunnel
